"""``bloge run`` with ``bloge.runner: temporal``: the run is a workflow that ``bloge worker``
processes run; this process starts it and follows it in the run store until its output, or
until it pauses for approval or results (:class:`~bloge.agent.RunPaused`, reported as a local
run's: exit 3, or with ``--wait`` waiting for the decisions and then going on with it).
Streamed, it shows the run's tokens and tool calls as the workers write them to the store.
Ctrl-C cancels the workflow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bloge_container.cli.console import err, failure, out
from bloge_container.cli.options import check_budget_priced

if TYPE_CHECKING:
    from bloge import AgentDef, AgentOutput, AgentStreamChunk
    from bloge.agent.runtime import ChunkSink
    from bloge.store import Store
    from bloge.temporal import TemporalRunner, TemporalRunStore
    from bloge_container.application import ApplicationContainer
    from bloge_container.cli.progress import StreamPrinter
    from bloge_container.cli.run import Start


def check(container: ApplicationContainer, definition: AgentDef, start: Start,
          budget: Sequence[str] = ()) -> dict[str, Any]:
    """Refuse what a worker could not run, before anything starts (thread and key budgets
    included, which its runs would not keep); the run budget limits of ``budget``
    (``--budget``'s texts) the workers keep, by measure."""
    from bloge_container import temporal
    from bloge_container.budgets import refuse_unkept_on_temporal

    temporal.require_extra("bloge.runner: temporal")
    agents = container.agents()
    if agents.get(definition.id) is None:
        raise failure(f"bloge.runner is temporal, and the workers run the agents of "
                      f"bloge.agents.dsl-locations: {definition.id!r} is not one of them "
                      f"({', '.join(sorted(agents)) or 'none'})")
    refuse_unkept_on_temporal(container.settings(), "bloge.runner: temporal")
    kept = _kept_limits(definition, budget)  # refuses --budget thread.… by its name first
    # A workflow keeps its run's limits only (the thread's were refused above).
    check_budget_priced(container, definition, budget, recorded=False)
    if definition.thread_budget is not None and definition.thread_budget.limited:
        from bloge.temporal.limits import thread_budget_refusal  # the extra is there

        raise failure(thread_budget_refusal(definition.id))
    if start.run_id is not None and container.run_store() is None:
        raise failure("a Temporal run continues by itself after a crash; there is no stored "
                      "run to resume (bloge.runner is temporal)")
    return kept


def _kept_limits(definition: AgentDef, budget: Sequence[str]) -> dict[str, Any]:
    """The run budget limits of ``--budget``'s texts, refusing, text by text, those a
    workflow does not keep (:func:`~bloge.temporal.limits.refuse_unkept`)."""
    from dataclasses import replace

    from bloge.agent import Budget, with_budget_limits
    from bloge.temporal.limits import LimitsRefusedError, kept_limits, refuse_unkept

    bare = replace(definition, budget=None, thread_budget=None)
    for text in budget:
        # The limits the text gives, on a definition of no budget of its own.
        given = with_budget_limits(bare, [text], option="--budget")
        try:
            refuse_unkept({**(given.budget or Budget()).limits(),
                           "thread": (given.thread_budget or Budget()).limits()})
        except LimitsRefusedError as refused:  # named by the text that gave it
            raise failure(f"--budget {text}: {refused.why}") from None
    return kept_limits(with_budget_limits(bare, budget, option="--budget").budget)


async def run_on_temporal(container: ApplicationContainer, definition: AgentDef, start: Start,
                          *, max_turns: int | None, budget: Mapping[str, Any], live: bool,
                          as_json: bool) -> AgentOutput:
    """Start the run (or, given ``start.run_id``, go on with that paused run) and wait for
    its output; :class:`~bloge.agent.RunPaused` once it waits (with a run store). The run
    takes ``max_turns`` and the run ``budget``'s limits (see :func:`check`): from its start,
    or, resumed, as its round goes on (a run this command started has them already)."""
    from bloge.temporal import TemporalRunner, connect
    from bloge_container import temporal
    from bloge_container.application import close_container
    from bloge_container.cli.progress import StreamPrinter

    settings = container.settings()
    printer: StreamPrinter | None = None
    try:
        client = await connect(temporal.connection(settings))
        store = container.run_store()
        # With the store, a long run's messages come back from it (see TemporalRunner).
        runner = TemporalRunner(client, settings.temporal.task_queue,
                                workflow_task_timeout=settings.temporal.workflow_task_timeout,
                                local_model_calls=settings.temporal.local_model_calls,
                                store=store,
                                max_payload_bytes=int(settings.temporal.max_payload_bytes))
        # With the store, the run is followed there: its events, and its pause.
        runs = None if store is None else temporal.runs_store(settings, store, client=client)
        queue = settings.temporal.task_queue
        run_id = start.run_id
        if run_id is None:
            handle = await runner.start(definition.id, start.text, thread_id=start.thread_id,
                                        checkpoint=start.checkpoint, max_turns=max_turns,
                                        budget=budget)
            run_id = handle.id
            err.print(f"workflow {run_id} on task queue {queue!r}", markup=False, style="dim")
        hint = None if store is None else asyncio.create_task(waiting_for_a_worker(
            store, run_id, lambda: err.print(
                f"no worker has taken the run after {NO_WORKER_HINT:g}s: is bloge worker "
                f"running for task queue {queue!r} on {settings.temporal.address}? (the run "
                "waits for one; Ctrl-C cancels it)", markup=False)))
        # The workers run the agent as configured: only a streaming one has tokens to show.
        served = container.agents()[definition.id].definition
        if live and runs is not None and served.streaming:
            printer = StreamPrinter(out, err, as_json=as_json)
        resumed = start.run_id is not None and not start.started_here
        try:
            output = await _outcome(runner, runs, run_id, start,
                                    None if printer is None else _sink(printer),
                                    max_turns=max_turns if resumed else None,
                                    budget=budget if resumed else None)
        finally:
            if hint is not None:
                hint.cancel()
        if live and printer is None:
            out.print(output.content, markup=False)
        return output
    finally:
        if printer is not None:
            printer.finish()
        await close_container(container)


async def _outcome(runner: TemporalRunner, runs: TemporalRunStore | None, run_id: str,
                   start: Start, sink: ChunkSink | None, *, max_turns: int | None,
                   budget: Mapping[str, Any] | None) -> AgentOutput:
    """The run's output: followed in the store by ``runs`` (which raises
    :class:`~bloge.agent.RunPaused` when it waits, and cancels its workflow on Ctrl-C), or
    with no store, the workflow's result. A resumed run goes on with ``max_turns`` and
    ``budget`` if given."""
    from bloge import AgentRunError, BlogeUsageError
    from bloge.temporal import LimitsRefusedError, RunCancelledError

    try:
        if runs is not None and start.run_id is not None:
            try:
                return await runs.go_on(run_id, sink=sink, max_turns=max_turns, budget=budget)
            except LimitsRefusedError as refused:  # in the words of the flags that gave them
                raise BlogeUsageError(refused.naming(max_turns="--max-turns",
                                                     budget="--budget")) from None
        if runs is not None:
            return await runs.follow(run_id, start.thread_id, sink)
        return await runner.result(run_id)
    except RunCancelledError as cancelled:
        # Cancelled from elsewhere (bloge runs cancel): interrupted, as a local run is, with
        # the checkpoint its workflow recorded.
        if isinstance(cancelled.__cause__, AgentRunError):
            raise asyncio.CancelledError(str(cancelled)) from cancelled.__cause__
        raise
    except asyncio.CancelledError:
        # Ctrl-C: the workflow and its running activities are cancelled too.
        if runs is None:
            await asyncio.shield(runner.cancel(run_id))
        raise


def _sink(printer: StreamPrinter) -> ChunkSink:
    """The run's chunks, as the workers write them to the store, to ``printer``."""

    async def show(chunk: AgentStreamChunk) -> None:
        printer.show(chunk)

    return show


#: Seconds after which ``bloge run`` says that no worker has taken its run yet.
NO_WORKER_HINT = 10.0


async def waiting_for_a_worker(store: Store, run_id: str, say: Callable[[], None], *,
                               after: float = NO_WORKER_HINT) -> None:
    """Call ``say`` once if no worker has started the run in ``store`` within ``after``
    seconds (Temporal keeps the workflow until a worker polls its task queue)."""
    from bloge.store import StoreNotFoundError

    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(after):
            while True:
                try:
                    await store.get_run(run_id)
                except StoreNotFoundError:
                    await asyncio.sleep(min(0.5, after / 4))
                else:
                    return
    say()
