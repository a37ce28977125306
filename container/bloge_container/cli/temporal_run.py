"""``bloge run`` with ``bloge.runner: temporal``: the run is a workflow that ``bloge worker``
processes run; this process starts it and waits for its output. Streamed, it shows the
run's tokens and tool calls as the workers write them to the run store. Ctrl-C cancels the
workflow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from bloge_container.cli.console import err, failure, out

if TYPE_CHECKING:
    from bloge import AgentDef, AgentOutput
    from bloge.store import Store
    from bloge.temporal import TemporalRunner
    from bloge_container.application import ApplicationContainer
    from bloge_container.cli.progress import StreamPrinter
    from bloge_container.cli.run import Start


def check(container: ApplicationContainer, definition: AgentDef, start: Start) -> None:
    """Refuse what a worker could not run, before anything starts."""
    from bloge_container import temporal

    temporal.require_extra("bloge.runner: temporal")
    agents = container.agents()
    if agents.get(definition.id) is None:
        raise failure(f"bloge.runner is temporal, and the workers run the agents of "
                      f"bloge.agents.dsl-locations: {definition.id!r} is not one of them "
                      f"({', '.join(sorted(agents)) or 'none'})")
    if start.run_id is not None:
        raise failure("a Temporal run continues by itself after a crash; there is no stored "
                      "run to resume (bloge.runner is temporal)")


async def run_on_temporal(container: ApplicationContainer, definition: AgentDef, start: Start,
                          *, max_turns: int | None, live: bool,
                          as_json: bool) -> AgentOutput:
    from bloge.temporal import TemporalRunner, connect
    from bloge_container import temporal
    from bloge_container.application import close_container

    settings = container.settings()
    try:
        client = await connect(temporal.connection(settings))
        store = container.run_store()
        # With the store, a long run's messages come back from it (see TemporalRunner).
        runner = TemporalRunner(client, settings.temporal.task_queue,
                                workflow_task_timeout=settings.temporal.workflow_task_timeout,
                                local_model_calls=settings.temporal.local_model_calls,
                                store=store,
                                max_payload_bytes=int(settings.temporal.max_payload_bytes))
        handle = await runner.start(definition.id, start.text, thread_id=start.thread_id,
                                    checkpoint=start.checkpoint, max_turns=max_turns)
        queue = settings.temporal.task_queue
        err.print(f"workflow {handle.id} on task queue {queue!r}", markup=False, style="dim")
        hint = None if store is None else asyncio.create_task(waiting_for_a_worker(
            store, handle.id, lambda: err.print(
                f"no worker has taken the run after {NO_WORKER_HINT:g}s: is bloge worker "
                f"running for task queue {queue!r} on {settings.temporal.address}? (the run "
                "waits for one; Ctrl-C cancels it)", markup=False)))
        # The workers run the agent as configured: only a streaming one has tokens to show.
        served = container.agents()[definition.id].definition
        tokens = live and store is not None and served.streaming
        try:
            if tokens and store is not None:
                output = await _streamed(runner, store, handle.id, as_json=as_json)
            else:
                output = await runner.result(handle.id)
                if live:
                    out.print(output.content, markup=False)
        except asyncio.CancelledError:
            # Ctrl-C: the workflow and its running activities are cancelled too.
            await asyncio.shield(runner.cancel(handle.id))
            raise
        finally:
            if hint is not None:
                hint.cancel()
        return output
    finally:
        await close_container(container)


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


async def _streamed(runner: TemporalRunner, store: Store, run_id: str, *,
                    as_json: bool) -> AgentOutput:
    """Print the run's chunks from the store while waiting for its output."""
    from bloge_container.cli.progress import StreamPrinter

    printer = StreamPrinter(out, err, as_json=as_json)
    relay = asyncio.create_task(_relay(store, run_id, printer))
    try:
        output = await runner.result(run_id)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(relay), timeout=5.0)  # the last events
        return output
    finally:
        relay.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await relay
        printer.finish()


async def _relay(store: Store, run_id: str, printer: StreamPrinter) -> None:
    from bloge.store import StoreNotFoundError, event_chunk, follow

    while True:  # until a worker has started the run in the store
        try:
            await store.get_run(run_id)
        except StoreNotFoundError:
            await asyncio.sleep(0.1)
        else:
            break
    async for event in follow(store, run_id):
        chunk = event_chunk(event)
        if chunk is not None:
            printer.show(chunk)
