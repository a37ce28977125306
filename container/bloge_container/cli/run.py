"""``bloge run``: run an agent — by id, or the agent of a ``.bloge`` file — on one input."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import err, failure, out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    check_budget_priced,
    missing_settings_file,
    open_container,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from bloge import (
        AgentCheckpoint,
        AgentDef,
        AgentExecutionListener,
        AgentLoopOperator,
        AgentOutput,
        OperatorContext,
        StreamingAgentLoopOperator,
    )
    from bloge.store import Store
    from bloge_container.application import ApplicationContainer
    from bloge_container.cli.failures import Invocation
    from bloge_container.cli.progress import ProgressListener


def run(
    target: Annotated[str, typer.Argument(help="An agent id, or a .bloge file declaring one.",
                                          show_default=False)],
    input_text: Annotated[str | None, typer.Argument(
        metavar="INPUT", help="What to ask the agent; read from stdin when omitted.",
        show_default=False)] = None,
    stream: Annotated[bool, typer.Option(
        "--stream", help="Show the answer's tokens live on stdout, tool calls on stderr.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the output, or the failure, "
                                          "as JSON (with --stream: one JSON object per chunk).")
    ] = False,
    resume: Annotated[Path | None, typer.Option(
        "--resume", help="Continue from a checkpoint file saved by an earlier run.",
        dir_okay=False, show_default=False)] = None,
    max_turns: Annotated[int | None, typer.Option(
        "--max-turns", min=1, help="Override the agent's max_turns (and that of the agents it "
        "hands over to).", show_default=False)] = None,
    budget: Annotated[list[str] | None, typer.Option(
        "--budget", help="Set or raise a budget limit, e.g. usd=1.00, tokens=80000, "
        "tool_calls=40, time=5m; thread.<limit>=… for the thread's (repeatable).",
        show_default=False)] = None,
    agent_id: Annotated[str | None, typer.Option(
        "--agent", help="Which agent of a .bloge file declaring several.",
        show_default=False)] = None,
    thread: Annotated[str | None, typer.Option(
        "--thread", help="Continue a conversation: a thread id, or 'new' to start one (its id "
        "is printed). Needs the run store.", show_default=False)] = None,
    wait: Annotated[bool, typer.Option(
        "--wait", help="When a tool call waits for approval, wait here for the decisions and "
        "continue (instead of exiting 3).")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Run an agent and print its answer.

    Every run is recorded in the run store (bloge.store): `bloge runs show` prints it. Ctrl-C
    stops the run, saves its checkpoint and prints the command that resumes it (exit 130); a
    second Ctrl-C quits at once. SIGTERM does the same with exit 143. A failed run does the
    same and exits 1. A run that reaches a tool call needing approval prints the waiting calls
    and the `bloge approvals approve|deny` commands and exits 3; the decision that answers the
    last one continues it (with --wait, this command waits for the decisions and continues).
    """
    from bloge_container.cli.failures import Invocation

    with reported_errors():
        container = open_container(config, profile)
        definition = _definition(container, target, agent_id, config)
        if resume is not None and thread is not None:
            raise failure("--resume continues a checkpoint's own conversation; leave out "
                          "--thread")
        if wait and container.run_store() is None:
            raise failure("--wait waits for the decisions in the run store, and "
                          "bloge.store.enabled is false")
        checkpoint, run_id = _checkpoint(resume) if resume is not None else (None, None)
        text = _input(input_text, required=checkpoint is None)
        if run_id is not None and _recorded(container, run_id, definition):
            if text is not None:
                raise failure(f"{resume} is a checkpoint of run {run_id}, which resumes where "
                              "it stopped, without new input; leave the input out")
            start = Start(run_id=run_id)
        else:
            start = Start(text=text, checkpoint=checkpoint,
                          thread_id=_thread(container, thread))
        invocation = Invocation(target, agent_id, max_turns, config, profile,
                                budget=tuple(budget or ()))
        run_until_answered(container, definition, start, invocation, stream=stream,
                           as_json=as_json, wait=wait)


def run_until_answered(container: ApplicationContainer, definition: AgentDef, start: Start,
                       invocation: Invocation, *, stream: bool, as_json: bool,
                       wait: bool) -> None:
    """:func:`run_agent`; with ``wait``, a run that pauses is continued here once decided."""
    from bloge_container.cli.options import with_store
    from bloge_container.cli.paused import WaitingForDecisionsError, decided, ended_elsewhere
    from bloge_container.store import opened

    while True:
        try:
            run_agent(container, definition, start, invocation, stream=stream,
                      as_json=as_json, wait=wait)
        except WaitingForDecisionsError as waiting:
            run_id = waiting.run_id
            lookup = opened(container.settings(), container.project())
            run = with_store(lookup, functools.partial(decided, run_id=run_id))
            if run.status.finished:
                ended_elsewhere(run, as_json=as_json)
                return
            container = open_container(invocation.config, invocation.profile)
            start = Start(run_id=run_id, started_here=True)
            continue
        return


@dataclass(frozen=True, slots=True)
class Start:
    """What a run starts from: new input (on a thread), a checkpoint, or a recorded run."""

    text: str | None = None
    checkpoint: AgentCheckpoint | None = None
    thread_id: str | None = None
    run_id: str | None = None
    started_here: bool = False
    """A run this command started and goes on with (``--wait``): on Temporal, its workflow
    has the command's limits (``--max-turns``, ``--budget``) from its start already."""


def run_agent(container: ApplicationContainer, definition: AgentDef, start: Start,
              invocation: Invocation, *, stream: bool, as_json: bool,
              wait: bool = False) -> None:
    """Run ``definition`` from ``start`` and print the answer (or the output as JSON)."""
    given = functools.partial(_given, invocation)
    definition = given(definition)
    from bloge_container.cli.progress import ProgressListener

    live = stream or definition.streaming  # a streaming agent always shows its chunks
    tracker = ProgressListener()
    operator = _operator(container, definition, streaming=live, tracker=tracker, given=given)
    output = _execute(container, operator, start, tracker, invocation, as_json=as_json,
                      live=live, wait=wait)
    if as_json and not live:
        from bloge.core.masking import mask_urls_in

        document = mask_urls_in(output.to_dict())
        out.print(json.dumps(document, ensure_ascii=False, indent=2), markup=False)
    elif not live:
        out.print(output.content, markup=False)
    if output.exit_reason == "stop" and output.finish_reason == "length":
        # The answer looks complete and the command exits 0: say that it is not.
        err.print(f"warning: the model's answer was cut at its token limit (finish_reason "
                  f"length); raise max_tokens (the agent's {definition.id!r}, or the provider's "
                  f"max-tokens setting) for a whole answer", markup=False, style="yellow")
    if output.exit_reason == "exit_condition" and not as_json:
        err.print(f"(the exit condition ended the run after the tools returned: "
                  f"{_encode(output.tool_results)})", markup=False, style="dim")
    if output.run_id is not None and not as_json:
        continued = f"; continue it with --thread {output.thread_id}" if start.thread_id else ""
        if not _durable(container):
            continued = " (a memory:// store: they end with this command)"
        err.print(f"run {output.run_id} on thread {output.thread_id}{continued}",
                  markup=False, style="dim")


def _durable(container: ApplicationContainer) -> bool:
    """Whether a later command finds what this one records (not so in a ``memory://``
    store)."""
    store = container.run_store()
    return store is not None and not store.url.startswith("memory:")


def _thread(container: ApplicationContainer, thread: str | None) -> str | None:
    if thread is None:
        return None
    if not thread.strip():  # the store would keep a thread with no id (the server refuses it)
        raise failure("--thread needs a thread id, or 'new' to start one")
    if container.run_store() is None:
        raise failure("--thread needs the run store, and bloge.store.enabled is false")
    if thread == "new":
        from bloge.core.ids import new_id

        return new_id()
    return thread


def _definition(container: ApplicationContainer, target: str,
                agent_id: str | None, config: Path | None) -> AgentDef:
    path = Path(target)
    if target.endswith(".bloge") or path.is_file():
        from bloge_container.agents import agent_compiler, with_settings

        settings = container.settings()
        compiler = agent_compiler(settings, container.operator_registry(), container.project())
        definitions = [with_settings(d, settings) for d in compiler.compile_all_file(path)]
        return _pick(definitions, agent_id, where=str(path))
    agents = container.agents()
    if target in agents:
        return agents[target].definition
    from bloge.core.suggest import did_you_mean_hint

    hint = did_you_mean_hint(target, agents)
    if not agents and (no_project := missing_settings_file(config)) is not None:
        raise failure(f"no agent {target!r}: {no_project}")
    known = ", ".join(sorted(agents)) or "none (check bloge.agents.dsl-locations)"
    raise failure(f"no agent {target!r}{hint} (agents: {known})")


def _pick(definitions: list[AgentDef], agent_id: str | None, *, where: str) -> AgentDef:
    ids = [d.id for d in definitions]
    if agent_id is not None:
        for definition in definitions:
            if definition.id == agent_id:
                return definition
        declared = ", ".join(ids) or "none"
        raise failure(f"{where} declares no agent {agent_id!r} (it declares: {declared})")
    if len(definitions) == 1:
        return definitions[0]
    if not definitions:
        raise failure(f"{where} declares no agent")
    raise failure(f"{where} declares {len(ids)} agents ({', '.join(ids)}); choose one with --agent")


def _checkpoint(path: Path) -> tuple[AgentCheckpoint, str | None]:
    """The checkpoint the file at ``path`` holds, and the recorded run it names, if any."""
    from bloge import AgentCheckpoint, BlogeUsageError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise failure(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise failure(f"checkpoint {path} is not UTF-8 text ({exc.reason} at byte "
                      f"{exc.start})") from None
    try:
        checkpoint = AgentCheckpoint.from_json(text)
    except BlogeUsageError as exc:
        raise failure(f"{path}: {exc}") from None
    run_id = json.loads(text).get("run_id")  # an object: the checkpoint was read from it
    if run_id is not None and not isinstance(run_id, str):
        raise failure(f"{path}: checkpoint is malformed: 'run_id' must be a string, got "
                      f"{type(run_id).__name__}")
    return checkpoint, run_id


def _recorded(container: ApplicationContainer, run_id: str, definition: AgentDef) -> bool:
    """Whether the application's run store holds run ``run_id``, a run of ``definition``'s
    agent (a checkpoint file names the recorded run it was saved from: ``--resume`` then
    continues that run, as ``bloge runs resume`` does)."""
    from bloge.store import StoreNotFoundError
    from bloge_container.cli.options import with_store
    from bloge_container.store import opened

    if not _durable(container):
        return False

    async def agent_of(store: Store) -> str | None:
        try:
            return (await store.get_run(run_id)).agent_id
        except StoreNotFoundError:
            return None

    # Looked up in a store of its own, closed at once: the run then uses the container's.
    lookup = opened(container.settings(), container.project())
    return with_store(lookup, agent_of) == definition.id


def _input(argument: str | None, *, required: bool) -> str | None:
    if argument is not None and argument.strip():
        return argument
    if argument is not None:  # a blank argument is no input, as blank stdin is
        if required:
            raise failure('no input: the argument is blank; pass the question (bloge run '
                          'AGENT "question") or give it on stdin')
        return None
    stdin = sys.stdin  # None when the command was started with stdin closed
    if stdin is not None and not stdin.isatty():
        try:
            text = stdin.read().strip()
        except UnicodeDecodeError as exc:
            raise failure(f"the input on stdin is not UTF-8 text ({exc.reason} at byte "
                          f"{exc.start})") from None
        if text:
            return text
    if required:
        raise failure('no input: pass it as an argument (bloge run AGENT "question") or on stdin')
    return None


def _given(invocation: Invocation, definition: AgentDef) -> AgentDef:
    """``definition`` with the command's ``--max-turns`` and ``--budget``, when it gave them."""
    if invocation.max_turns is not None:
        from bloge import AgentBuilder

        definition = AgentBuilder.from_def(definition).max_turns(invocation.max_turns).build()
    if invocation.budget:
        from bloge.agent import with_budget_limits

        definition = with_budget_limits(definition, invocation.budget, option="--budget")
    return definition


def _operator(container: ApplicationContainer, definition: AgentDef, *, streaming: bool,
              tracker: AgentExecutionListener, given: Callable[[AgentDef], AgentDef],
              ) -> AgentLoopOperator | StreamingAgentLoopOperator:
    from dataclasses import replace

    if streaming and not definition.streaming:
        definition = replace(definition, streaming=True)
    return recorded_operator(container, definition, (*container.listeners(), tracker),
                             given=given)


def recorded_operator(container: ApplicationContainer, definition: AgentDef,
                      listeners: Sequence[AgentExecutionListener], *,
                      given: Callable[[AgentDef], AgentDef] | None = None,
                      ) -> AgentLoopOperator | StreamingAgentLoopOperator:
    """The operator of ``definition`` recording its runs in the application's run store, with
    the agents it hands over to linked (they run inside its run, recorded in its store, with
    what the command ``given`` them: ``--max-turns``, ``--budget``)."""
    from bloge_container.agents import linked, materialize
    from bloge_container.budgets import budget_policy

    budgets = budget_policy(container.settings())
    registry, report = container.operator_registry(), container.report()
    definitions = {agent_id: loaded.definition for agent_id, loaded in container.agents().items()}
    return linked(materialize(definition, registry, listeners, report, container.run_store(),
                              budgets=budgets), definitions,
                  lambda other: materialize(other, registry, listeners, report, budgets=budgets),
                  given=given)


def _execute(container: ApplicationContainer,
             operator: AgentLoopOperator | StreamingAgentLoopOperator, start: Start,
             tracker: ProgressListener, invocation: Invocation, *, as_json: bool,
             live: bool, wait: bool = False) -> AgentOutput:
    from bloge import AgentRunError, OperatorContext, RunPaused, StreamingAgentLoopOperator
    from bloge_container.autopilot import tuned
    from bloge_container.cli.failures import Reporting, run_failed, run_interrupted
    from bloge_container.cli.interrupt import run_cancellable
    from bloge_container.components import secret_values

    ctx = OperatorContext.root()
    if container.settings().runner == "temporal":
        from bloge_container.cli import temporal_run

        budget = temporal_run.check(container, operator.agent_def, start, invocation.budget)
        agent_run = temporal_run.run_on_temporal(container, operator.agent_def, start,
                                                 max_turns=invocation.max_turns, budget=budget,
                                                 live=live, as_json=as_json)
    else:
        check_budget_priced(container, operator.agent_def, invocation.budget,
                            recorded=container.run_store() is not None)
        agent_run = (_streamed(container, operator, start, ctx, as_json=as_json)
                     if isinstance(operator, StreamingAgentLoopOperator)
                     else _whole(container, operator, start, ctx))
        agent_run = tuned(container.autopilot(), operator, agent_run,
                          keep_max_turns=invocation.max_turns is not None)
    try:
        with tracker.showing(err, enabled=not live):  # ended before anything below prints
            output = run_cancellable(agent_run)
    except RunPaused as paused:
        from bloge_container.cli.paused import report_paused

        _journal_hint(container, paused.run_id or ctx.execution_id)
        report_paused(paused, as_json=as_json, streamed=live, wait=wait)
        raise AssertionError("report_paused exits") from None
    except (AgentRunError, asyncio.CancelledError) as exc:
        failed = exc if isinstance(exc, AgentRunError) else exc.__cause__
        _journal_hint(container, getattr(failed, "run_id", None) or ctx.execution_id)
        reporting = Reporting(container.project().path, secret_values(container.settings()),
                              as_json=as_json, streamed=live, durable=_durable(container))
        if isinstance(exc, AgentRunError):
            run_failed(exc, invocation, reporting)
        run_interrupted(exc, invocation, reporting)
    _journal_hint(container, output.run_id or ctx.execution_id)
    return output


async def _whole(container: ApplicationContainer, operator: AgentLoopOperator, start: Start,
                 ctx: OperatorContext) -> AgentOutput:
    from bloge_container.application import close_container

    try:
        if start.run_id is not None:
            return await operator.aresume_run(start.run_id, ctx)
        if start.checkpoint is not None:
            return await operator.aresume(start.checkpoint, start.text, ctx)
        return await operator.aexecute(start.text, ctx, thread_id=start.thread_id)
    finally:
        await close_container(container)


async def _streamed(container: ApplicationContainer, operator: StreamingAgentLoopOperator,
                    start: Start, ctx: OperatorContext, *, as_json: bool) -> AgentOutput:
    from contextlib import aclosing

    from bloge import Done
    from bloge.llm.providers.retry import observing_retries
    from bloge_container.application import close_container
    from bloge_container.cli.progress import StreamPrinter

    printer = StreamPrinter(out, err, as_json=as_json)
    if start.run_id is not None:
        chunks = operator.resume_run_stream(start.run_id, ctx)
    elif start.checkpoint is not None:
        chunks = operator.resume_stream(start.checkpoint, start.text, ctx)
    else:
        chunks = operator.stream(start.text, ctx, thread_id=start.thread_id)
    try:
        with observing_retries(printer.retrying):
            async with aclosing(chunks) as stream:
                async for chunk in stream:
                    printer.show(chunk)
                    if isinstance(chunk, Done):
                        return chunk.final_output
        raise AssertionError("a stream always ends with Done or an error")
    finally:
        printer.finish()
        await close_container(container)


def _journal_hint(container: ApplicationContainer, execution_id: str) -> None:
    """Where the run was journaled, so that `bloge journal show` can be run next."""
    from bloge_container.journal import journal_path
    from bloge_container.store import journal_sink

    settings = container.settings()
    if not settings.event_journal.enabled:
        return
    sink = journal_sink(settings)
    if sink == "store" and container.run_store() is not None:
        err.print(f"journal: run {execution_id} in the run store "
                  f"(bloge journal show {execution_id[:8]})", markup=False, style="dim")
        return
    journal = container.event_journal()
    if journal is not None and journal.failure is None and sink == "file":
        path = journal_path(settings, container.project())
        err.print(f"journal: execution {execution_id} in {path} "
                  f"(bloge journal show {execution_id[:8]})", markup=False, style="dim")


def _encode(value: Any) -> str:
    from bloge.core.codec import DEFAULT_CODEC

    return DEFAULT_CODEC.encode_lenient(value)

