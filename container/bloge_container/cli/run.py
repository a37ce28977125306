"""``bloge run``: run an agent — by id, or the agent of a ``.bloge`` file — on one input."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import err, failure, out, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container

if TYPE_CHECKING:
    from bloge import (
        AgentCheckpoint,
        AgentDef,
        AgentExecutionListener,
        AgentLoopOperator,
        AgentOutput,
        OperatorContext,
        StreamingAgentLoopOperator,
    )
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
        "--max-turns", min=1, help="Override the agent's max_turns.", show_default=False)] = None,
    agent_id: Annotated[str | None, typer.Option(
        "--agent", help="Which agent of a .bloge file declaring several.",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Run an agent and print its answer.

    Ctrl-C stops the run, saves its checkpoint and prints the command that resumes it (exit
    130); a second Ctrl-C quits at once. A failed run does the same and exits 1.
    """
    from bloge_container.cli.failures import Invocation

    with reported_errors():
        container = open_container(config, profile)
        definition = _definition(container, target, agent_id)
        if max_turns is not None:
            from bloge import AgentBuilder

            definition = AgentBuilder.from_def(definition).max_turns(max_turns).build()
        checkpoint = _checkpoint(resume) if resume is not None else None
        text = _input(input_text, required=checkpoint is None)
        from bloge_container.cli.progress import ProgressListener

        live = stream or definition.streaming  # a streaming agent always shows its chunks
        tracker = ProgressListener()
        operator = _operator(container, definition, streaming=live, tracker=tracker)
        invocation = Invocation(target, agent_id, max_turns, config, profile)
        output = _execute(container, operator, text, checkpoint, tracker, invocation,
                          as_json=as_json, live=live)
        if as_json and not live:
            from bloge.core.masking import mask_urls_in

            document = mask_urls_in(_output_json(output))
            out.print(json.dumps(document, ensure_ascii=False, indent=2), markup=False)
        elif not live:
            out.print(output.content, markup=False)
        if output.exit_reason == "exit_condition" and not as_json:
            err.print(f"(the exit condition ended the run after the tools returned: "
                      f"{_encode(output.tool_results)})", markup=False, style="dim")


def _definition(container: ApplicationContainer, target: str,
                agent_id: str | None) -> AgentDef:
    path = Path(target)
    if target.endswith(".bloge") or path.is_file():
        from bloge import AgentDslCompiler

        definitions = AgentDslCompiler(container.operator_registry()).compile_all_file(path)
        return _pick(definitions, agent_id, where=str(path))
    agents = container.agents()
    if target in agents:
        return agents[target].definition
    from bloge.core import did_you_mean

    suggestions = did_you_mean(target, agents)
    hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
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


def _checkpoint(path: Path) -> AgentCheckpoint:
    from bloge import AgentCheckpoint, BlogeUsageError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise failure(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise failure(f"checkpoint {path} is not UTF-8 text ({exc.reason} at byte "
                      f"{exc.start})") from None
    try:
        return AgentCheckpoint.from_json(text)
    except BlogeUsageError as exc:
        raise failure(f"{path}: {exc}") from None


def _input(argument: str | None, *, required: bool) -> str | None:
    if argument is not None:
        return argument
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
        raise failure("no input: pass it as an argument (bloge run AGENT \"question\") or on stdin")
    return None


def _operator(container: ApplicationContainer, definition: AgentDef, *, streaming: bool,
              tracker: AgentExecutionListener) -> AgentLoopOperator | StreamingAgentLoopOperator:
    from dataclasses import replace

    from bloge_container.agents import materialize

    if streaming and not definition.streaming:
        definition = replace(definition, streaming=True)
    listeners = (*container.listeners(), tracker)
    return materialize(definition, container.operator_registry(), listeners, container.report())


def _execute(container: ApplicationContainer,
             operator: AgentLoopOperator | StreamingAgentLoopOperator, text: str | None,
             checkpoint: AgentCheckpoint | None, tracker: ProgressListener,
             invocation: Invocation, *, as_json: bool, live: bool) -> AgentOutput:
    from bloge import AgentRunError, OperatorContext, StreamingAgentLoopOperator
    from bloge_container.cli.failures import Reporting, run_failed, run_interrupted
    from bloge_container.cli.interrupt import run_cancellable
    from bloge_container.components import secret_values

    ctx = OperatorContext.root()
    agent_run = (_streamed(container, operator, text, checkpoint, ctx, as_json)
                 if isinstance(operator, StreamingAgentLoopOperator)
                 else _whole(container, operator, text, checkpoint, ctx))
    try:
        with tracker.showing(err, enabled=not live):  # ended before anything below prints
            output = run_cancellable(agent_run)
    except (AgentRunError, asyncio.CancelledError) as exc:
        _journal_hint(container, ctx)
        reporting = Reporting(container.project().path, secret_values(container.settings()),
                              as_json=as_json, streamed=live)
        if isinstance(exc, AgentRunError):
            run_failed(exc, invocation, reporting)
        run_interrupted(exc.__cause__, invocation, reporting)
    _journal_hint(container, ctx)
    return output


async def _whole(container: ApplicationContainer, operator: AgentLoopOperator,
                 text: str | None, checkpoint: AgentCheckpoint | None,
                 ctx: OperatorContext) -> AgentOutput:
    from bloge_container.application import close_container

    try:
        if checkpoint is not None:
            return await operator.aresume(checkpoint, text, ctx)
        return await operator.aexecute(text, ctx)
    finally:
        await close_container(container)


async def _streamed(container: ApplicationContainer, operator: StreamingAgentLoopOperator,
                    text: str | None, checkpoint: AgentCheckpoint | None,
                    ctx: OperatorContext, as_json: bool) -> AgentOutput:
    from contextlib import aclosing

    from bloge import Done
    from bloge_container.application import close_container
    from bloge_container.cli.progress import StreamPrinter

    printer = StreamPrinter(out, err, as_json=as_json)
    chunks = (operator.resume_stream(checkpoint, text, ctx) if checkpoint is not None
              else operator.stream(text, ctx))
    try:
        async with aclosing(chunks) as stream:
            async for chunk in stream:
                printer.show(chunk)
                if isinstance(chunk, Done):
                    return chunk.final_output
        raise AssertionError("a stream always ends with Done or an error")
    finally:
        printer.finish()
        await close_container(container)


def _journal_hint(container: ApplicationContainer, ctx: OperatorContext) -> None:
    """Where the run was journaled, so that `bloge journal show` can be run next."""
    from bloge_container.journal import journal_path

    settings = container.settings()
    journal = container.event_journal() if settings.event_journal.enabled else None
    if journal is not None and journal.failure is None and settings.event_journal.sink == "file":
        path = journal_path(settings, container.project())
        err.print(f"journal: execution {ctx.execution_id} in {path} "
                  f"(bloge journal show {ctx.execution_id[:8]})", markup=False, style="dim")


def _output_json(output: AgentOutput) -> dict[str, Any]:
    return {
        "content": output.content,
        "finish_reason": output.finish_reason,
        "exit_reason": output.exit_reason,
        "turns_used": output.turns_used,
        "usage": {**output.usage.to_dict(), "total_tokens": output.usage.total_tokens},
        "tool_results": json.loads(_encode(output.tool_results)),
        "messages": [message.to_dict() for message in output.messages],
        "checkpoint": json.loads(output.checkpoint.to_json()),
    }


def _encode(value: Any) -> str:
    from bloge.core.codec import DEFAULT_CODEC

    return DEFAULT_CODEC.encode_lenient(value)

