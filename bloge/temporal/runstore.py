"""``TemporalRunStore``: an agent operator's ``store=`` that runs each run as a workflow.

Given to an ``AgentLoopOperator`` (or a streaming one) as its store, it makes every run of
the operator a Temporal workflow served by ``bloge worker`` processes — so ``bloge serve``
starts runs on the workers with no change of its own. The run's id is its workflow id; its
events, written to the run store by the workers, are read back and handed on as they come:
to the operator's chunk sink, and to this process's watchers of the run (``store.live``),
which is how a server streams them. Its ``listeners`` are told of the run's listener events
as they are relayed (``bloge serve``'s metrics: the workers notify their own listeners, so
give here only those that must see the runs this process starts, such as counters).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from temporalio.client import Client

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentInput,
    AgentOutput,
    GuardCheckedPayload,
    LlmCalledPayload,
    LoopExitedPayload,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.agent.runtime import CALLBACKS, AgentEngine, Callback, ChunkSink, ListenerChain
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.llm import ToolDefinition
from bloge.store import RunEvent, Store, event_chunk
from bloge.temporal.connection import Connection, connect
from bloge.temporal.options import MAX_PAYLOAD_BYTES
from bloge.temporal.runner import TemporalRunner

#: How often the run's events are read from the store while it runs, in seconds.
POLL_SECONDS = 0.05
#: How long the last events may take to appear after the run's output, in seconds.
DRAIN_SECONDS = 5.0
_END = frozenset({"done", "error"})
#: A listener event's type (its callback's name) → the callback and its payload's class.
_PAYLOADS: dict[str, tuple[Callback, type[Any]]] = {
    callback: (callback, kind) for callback, kind in zip(CALLBACKS, (
        TurnStartedPayload, LlmCalledPayload, ToolDispatchedPayload, ToolCompletedPayload,
        LoopExitedPayload, GuardCheckedPayload), strict=True)}
_log = logging.getLogger("bloge.temporal")


class TemporalRunStore:
    """Runs on ``task_queue`` of the service at ``connection`` (connected on first use),
    kept in ``store`` by the workers."""

    __slots__ = ("_client", "_lock", "connection", "listeners", "local_model_calls",
                 "max_payload_bytes", "store", "task_queue", "workflow_task_timeout")

    def __init__(self, store: Store, connection: Connection, task_queue: str, *,
                 workflow_task_timeout: float = 10.0, client: Client | None = None,
                 local_model_calls: bool = False,
                 listeners: Sequence[AgentExecutionListener] = (),
                 max_payload_bytes: int = MAX_PAYLOAD_BYTES) -> None:
        self.listeners = ListenerChain(listeners)
        self.store = store
        self.connection = connection
        self.task_queue = task_queue
        self.workflow_task_timeout = workflow_task_timeout
        self.local_model_calls = local_model_calls
        self.max_payload_bytes = max_payload_bytes
        self._client = client
        self._lock = asyncio.Lock()

    async def runner(self) -> TemporalRunner:
        async with self._lock:
            if self._client is None:
                self._client = await connect(self.connection)
        return TemporalRunner(self._client, self.task_queue,
                              workflow_task_timeout=self.workflow_task_timeout,
                              local_model_calls=self.local_model_calls, store=self.store,
                              max_payload_bytes=self.max_payload_bytes)

    async def record_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, thread_id: str | None, sink: ChunkSink | None,
                         metadata: Mapping[str, Any] | None,
                         run_id: str | None = None,
                         tools: Sequence[ToolDefinition] = ()) -> AgentOutput:
        if tools:
            raise BlogeUsageError("a run's own external tools (and paused runs) are not "
                                  "supported on Temporal yet; run it with bloge.runner: local")
        run = run_id or new_id()
        thread = thread_id or new_id()
        runner = await self.runner()
        self.store.live.started(run)
        try:
            await runner.start(engine.definition.id, input, run_id=run, thread_id=thread,
                               max_turns=engine.definition.max_turns, principal=ctx.principal)
            ended = asyncio.Event()
            relay = asyncio.create_task(self._relay(run, sink, ended))
            try:
                output = await runner.result(run)
            except asyncio.CancelledError:
                # The caller gave up (Ctrl-C, a client that left): so does the workflow.
                await asyncio.shield(runner.cancel(run))
                raise
            except BaseException as error:
                if hasattr(error, "thread_id"):
                    error.thread_id = thread
                raise
            finally:
                ended.set()  # the last events are in the store: read them now
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(relay), DRAIN_SECONDS)
                relay.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await relay
            return output
        finally:
            self.store.live.ended(run)

    async def resume_recorded_run(self, engine: AgentEngine, run_id: str, ctx: OperatorContext,
                                  *, sink: ChunkSink | None) -> AgentOutput:
        raise BlogeUsageError(f"run {run_id!r} runs on Temporal, which continues it by itself "
                              "after a crash; there is nothing to resume")

    async def _relay(self, run_id: str, sink: ChunkSink | None, ended: asyncio.Event) -> None:
        """The run's events from the store, until its last, to the live watchers, the
        listeners and the sink; read every ``POLL_SECONDS``, and once at once when the run
        has ``ended``."""
        after = 0
        while True:
            events = await self.store.run_events(run_id, after=after)
            for event in events:
                after = event.seq
                self.store.live.publish(event)
                if self.listeners:
                    self._notify(event)
                chunk = event_chunk(event)
                if sink is not None and chunk is not None:
                    await sink(chunk)
                if event.type in _END:
                    return
            if not events and ended.is_set():  # read once at the end, then poll again
                await asyncio.sleep(POLL_SECONDS)
            elif not events:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ended.wait(), POLL_SECONDS)

    def _notify(self, event: RunEvent) -> None:
        found = _PAYLOADS.get(event.type)
        if found is None:
            return
        callback, kind = found
        body = event.body
        try:
            payload = kind(**{field.name: body[field.name]
                              for field in dataclasses.fields(kind)})
        except (KeyError, TypeError):
            _log.warning("run %s: event %d (%s) lacks its callback's fields; its listeners "
                         "are not told of it", event.run_id, event.seq, event.type)
            return
        context = AgentCallbackContext(event.run_id, None, None,
                                       str(body.get("operator_ref", "")))
        self.listeners.notify(callback, context, payload)
