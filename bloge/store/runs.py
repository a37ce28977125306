"""``RecordedRuns``: agents run on a store — a new run on a thread, and a stored run resumed
where it stopped.

A new run takes its thread (refused while another run holds it), starts from the memory
view the thread's last run left — so a run on a long thread reads what its memory needs,
not the whole log — and records itself as it goes. A resumed run rebuilds its memory from
its last checkpoint; a tool round it was in is continued from the ledger: calls with a
recorded result are not run again.

A sub-agent's run on its caller's thread (``thread = "parent"``, see
:mod:`bloge.agent.caller_thread`) is a guest there: it joins the thread under its caller's
hold instead of taking it, numbers its messages from the caller's
:class:`~bloge.store.thread_log.ThreadLog`, and is continued only by its caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bloge.agent import AgentCheckpoint, AgentInput, AgentOutput, AgentRunError, AgentUsage
from bloge.agent.runtime import (
    AgentEngine,
    ChunkSink,
    Decision,
    PendingRound,
    RecordedResult,
    RunEffects,
    RunObserver,
    RunPaused,
    RunStart,
    check_priced,
    run_store_of,
)
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.core.tracecontext import TraceParent
from bloge.llm import LlmMessage, LlmResponse, ToolDefinition
from bloge.store import ops, traced
from bloge.store.budgets import StoreCounters
from bloge.store.errors import StoreNotFoundError
from bloge.store.owner import this_worker
from bloge.store.paused import as_stored, resumed_round, tool_json, tool_of
from bloge.store.recorder import Recorder
from bloge.store.records import Run, RunStatus, StoredMessage, ToolCallRecord
from bloge.store.sql import pending as pending_sql
from bloge.store.store import Store
from bloge.store.thread_log import RUNNING, RunningRun, ThreadLog
from bloge.store.writer import RunWriter, StoreWriter


class RecordedRuns:
    """Runs agents on ``store`` as recorded runs: the
    :class:`~bloge.agent.loop.observer.RunStore` of an agent operator given ``store=`` a
    :class:`Store` (the operator makes one for it). Every write goes through ``writer``
    (the store's own :class:`StoreWriter` by default)."""

    __slots__ = ("store", "writer")

    def __init__(self, store: Store, *, writer: RunWriter | None = None) -> None:
        self.store = store
        self.writer = writer if writer is not None else StoreWriter(store)

    def __repr__(self) -> str:
        return f"RecordedRuns({self.store!r})"

    async def record_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, thread_id: str | None, sink: ChunkSink | None,
                         metadata: Mapping[str, Any] | None,
                         run_id: str | None = None,
                         tools: Sequence[ToolDefinition] = (),
                         effects: Callable[[RunObserver], RunEffects] | None = None,
                         host: RunningRun | None = None,
                         ) -> AgentOutput:
        """Run ``input`` as a new recorded run ``run_id`` (a new id when ``None``) on
        ``thread_id`` (a new thread when ``None``), both owned by ``ctx.principal`` (a thread
        of another's is not found, unless the principal is an admin). The run is live in
        ``store.live`` from the start, so that a watcher can subscribe before it has its
        first event. ``metadata`` is kept on a new thread (``Thread.metadata``).

        ``effects``, given the run's observer, performs its tool rounds (and model calls)
        instead of the engine (see :class:`~bloge.agent.runtime.RunEffects`): a tool round of
        its own reports each completed call to the observer, as the engine's does, so that
        the run's ledger holds it.

        ``host``, the caller's run (a sub-agent's call), puts the run on the caller's thread
        under the caller's hold (``thread_id`` is then ignored): it starts from its input
        alone, and numbers its messages from the caller's :class:`ThreadLog`."""
        store = self.store
        run = run_id if run_id is not None else new_id()
        thread = thread_id if thread_id is not None else new_id()
        store.live.started(run)
        try:
            principal = ctx.principal
            owner = principal.name if principal else None
            if host is None:
                claim = await self.writer.start_run(
                    run_id=run, thread_id=thread, agent_id=engine.definition.id,
                    input=input.messages, metadata=metadata, worker=this_worker(),
                    owner=owner, own_thread_only=principal is not None and not principal.admin,
                    new_thread=thread_id is None)
                log = ThreadLog(store, thread, holder=run, next_seq=claim.next_seq)
                view = claim.view
            else:
                log = host.log
                await self.writer.join_run(run_id=run, thread_id=log.thread_id,
                                           holder=log.holder, parent_run_id=host.run_id,
                                           agent_id=engine.definition.id,
                                           input=input.messages, worker=this_worker(),
                                           owner=owner)
                view = None
            recorder = Recorder(store, self.writer, run_id=run, log=log)
            if tools:  # written with the first batch, before any model call
                recorder.keep(ops.KeepRunTools(run, tuple(tool_json(t) for t in tools)))
            if ctx.run_id is not None and host is None:  # a sub-agent's; a guest has its parent
                recorder.keep(ops.ParentRun(run, ctx.run_id))
            if store.tracing is not None:
                _trace(recorder, engine, started_at=store.clock(), parent=traced.started_in())
            try:
                history = await _history(store, log.thread_id, view, recorder)
                return await _run(engine, recorder, ctx, sink, input=input, history=history,
                                  tools=tools,
                                  effects=None if effects is None else effects(recorder))
            except BaseException as error:
                await _unfinished(recorder, error)
                raise
        finally:
            store.live.ended(run)

    async def resume_recorded_run(self, engine: AgentEngine, run_id: str,
                                  ctx: OperatorContext, *, sink: ChunkSink | None,
                                  host: RunningRun | None = None,
                                  input: AgentInput | None = None) -> AgentOutput:
        """Continue the stored run ``run_id`` from its last completed step. A run on its
        caller's thread is continued only by its caller (``host``, running on that thread):
        resumed by itself, it raises a :class:`~bloge.core.errors.BlogeUsageError` naming
        the caller to resume instead. Such a run that stopped before its first step starts
        again from ``input`` (its caller's messages themselves, which the log holds: not
        written again), else from its recorded input."""
        store = self.store
        store.live.started(run_id)
        try:
            run = await store.get_run(run_id)
            engine = _resumable(run, engine, ctx)
            restart = None
            if host is not None and host.log.thread_id == run.thread_id:
                log = host.log
                await self.writer.rejoin_run(run, holder=log.holder, worker=this_worker())
                view = None
                restart = input
            else:
                await check_not_a_guest(self.store, run)
                claim = await self.writer.reclaim_run(run, worker=this_worker())
                log = ThreadLog(store, run.thread_id, holder=run.id, next_seq=claim.next_seq)
                view = claim.view
            recorder = Recorder(store, self.writer, run_id=run.id, log=log,
                                events_stored=run.event_count)
            if store.tracing is not None:  # its events say where its spans go on
                _trace(recorder, engine, started_at=run.created_at,
                       parent=TraceParent.from_stored(run.trace_parent),
                       history=await store.run_events(run.id), agent=run.agent_id)
            try:
                return await _resume(store, engine, run, view, recorder, ctx, sink,
                                     restart=restart)
            except BaseException as error:
                await _unfinished(recorder, error, usage=run.usage, turns=run.turns)
                raise
        finally:
            store.live.ended(run_id)


    async def attach_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, run_id: str, sink: ChunkSink | None,
                         on_caller_thread: bool = False) -> AgentOutput:
        """Run ``run_id`` to its end however far it got: its recorded output when it
        succeeded, continued from its last step when it stopped (a crash, a failure), started
        when it never was (see :mod:`bloge.agent.subagent`): on a new thread, or with
        ``on_caller_thread`` on the thread of ``ctx``'s run (the caller's), when that run
        is one this store runs in this task (else, an unrecorded caller, on a new thread)."""
        host = self._caller(ctx) if on_caller_thread else None
        try:
            run = await self.store.get_run(run_id)
        except StoreNotFoundError:
            return await self.record_run(engine, input, ctx, thread_id=None, sink=sink,
                                         metadata=None, run_id=run_id, host=host)
        if run.status is RunStatus.SUCCEEDED:
            return _recorded_output(run)
        return await self.resume_recorded_run(engine, run_id, ctx, sink=sink, host=host,
                                              input=input)

    def _caller(self, ctx: OperatorContext) -> RunningRun | None:
        """The recorded run that called, when it is ``ctx``'s and runs in this task on this
        store; ``None`` for an unrecorded caller. A caller recorded in another store has no
        thread here: a :class:`~bloge.core.errors.BlogeUsageError`."""
        caller = RUNNING.get()
        if caller is None or ctx.run_id is None or caller.run_id != ctx.run_id:
            return None
        if caller.log.store is not self.store:
            raise BlogeUsageError(f"run {ctx.run_id!r} asks a sub-agent to run on its thread "
                                  '(thread = "parent"), but the sub-agent records its runs in '
                                  f"{self.store.url}, not in its caller's store "
                                  f"{caller.log.store.url}: give both agents one store")
        return caller

    async def check_resume(self, engine: AgentEngine, run_id: str,
                           ctx: OperatorContext) -> None:
        """Refuse a resume of run ``run_id`` with ``engine`` as :meth:`resume_recorded_run`
        does before it takes the run back."""
        _resumable(await self.store.get_run(run_id), engine, ctx)

    async def decide_run(self, run_id: str, *, decisions: Mapping[str, Decision],
                         tool_results: Mapping[str, Any], principal: str | None) -> None:
        """Record ``decisions`` on, and ``tool_results`` of, the waiting calls of the paused
        run ``run_id`` (see :mod:`bloge.store.approvals`)."""
        from bloge.store.approvals import decide_call, post_tool_results  # noqa: PLC0415 -- a cycle at import

        for call_id, decision in decisions.items():
            await decide_call(self.store, run_id, call_id, approve=decision.approved,
                              reason=decision.reason, principal=principal or decision.principal)
        if tool_results:
            await post_tool_results(self.store, run_id, tool_results, principal=principal)


def _trace(recorder: Recorder, engine: AgentEngine, *, started_at: float,
           parent: TraceParent | None, history: Sequence[Any] | None = None,
           agent: str | None = None) -> None:
    """Trace the recorder's run from its events; a new run keeps the trace context it was
    started in (written with its first batch), which a resume (``history``: its stored
    events; ``agent``: the one the run was started with, ``engine``'s that it goes on
    with) continues."""
    recorder.spans = traced.run_spans(
        recorder.store.tracing, run_id=recorder.run_id, thread_id=recorder.thread_id,
        agent=agent or engine.definition.id, started_at=started_at, parent=parent,
        model=engine.definition.model, history=history or ())
    if parent is not None and history is None:
        recorder.keep(ops.TraceRun(recorder.run_id, parent.stored()))


@run_store_of.register
def _recorded_runs(store: Store) -> RecordedRuns:
    """An operator given ``store=`` a :class:`Store` records its runs with
    :class:`RecordedRuns` (registered here: the loop cannot import the store)."""
    return RecordedRuns(store)


async def _resume(store: Store, engine: AgentEngine, run: Run, thread_view: Any,
              recorder: Recorder, ctx: OperatorContext, sink: ChunkSink | None, *,
              restart: AgentInput | None = None) -> AgentOutput:
    checkpoint = await store.latest_checkpoint(run.id)
    tools = await run_tools(store, run.id)
    if checkpoint is None:  # it stopped before its first model call: start it again
        history = await _history(store, run.thread_id, thread_view, recorder)
        return await _run(engine, recorder, ctx, sink, input=restart or AgentInput(run.input),
                          history=history, tools=tools)
    conversation = await _known(store, run.thread_id, checkpoint.view, recorder)
    done = await store.tool_calls(run.id, checkpoint.turn)
    pending_calls = await store.tool_calls(run.id, checkpoint.turn + 1)
    pending = None
    usage = checkpoint.usage
    if pending_calls:
        assistant = await _assistant(store, run.thread_id, pending_calls[0], recorder)
        conversation.append(assistant)
        pending = await resumed_round(
            store, recorder, _pending(checkpoint.turn + 1, assistant, pending_calls))
        recorder.round_started(len(pending_calls))
        usage = run.usage
    resumed = AgentCheckpoint(tuple(conversation), checkpoint.turn, _results(done),
                              engine.definition.id, usage)
    return await _run(engine, recorder, ctx, sink, checkpoint=resumed, pending=pending,
                      tools=tools)


def _recorded_output(run: Run) -> AgentOutput:
    """The output of a run that succeeded, as its record holds it (no transcript)."""
    document = run.output or {}
    checkpoint = AgentCheckpoint((), run.turns, {}, run.agent_id, run.usage)
    return AgentOutput(content=document.get("content", ""),
                       finish_reason=document.get("finish_reason", "stop"),
                       turns_used=run.turns, messages=(), tool_results={},
                       checkpoint=checkpoint, exit_reason=run.exit_reason or "stop",
                       usage=run.usage, run_id=run.id, thread_id=run.thread_id,
                       output=document.get("output"), output_data=document.get("output"))


def _resumable(run: Run, engine: AgentEngine, ctx: OperatorContext) -> AgentEngine:
    """The engine ``run`` goes on with (see :func:`_current`), refusing, before the run is
    taken back, a resume with ``engine`` of another agent's run or of one that succeeded, and
    limits ``run`` cannot keep: a run refused so stays as it was (a paused one waits on), for
    a resume with limits it can keep."""
    if run.agent_id != engine.definition.id:
        raise BlogeUsageError(f"run {run.id!r} is a run of agent {run.agent_id!r}, not of "
                              f"{engine.definition.id!r}")
    check_resumable(run)
    engine = _current(run, engine)
    principal = ctx.principal
    check_priced(engine.definition, engine.budgets, recorded=True,
                 principal=None if principal is None else principal.name)
    return engine


async def run_tools(store: Store, run_id: str) -> list[ToolDefinition]:
    """The run's own tools (a ``/v1`` client's), as ``record_run(tools=…)`` kept them."""
    return [tool_of(data) for data in await store.run_script(pending_sql.run_tools(run_id))]


def check_resumable(run: Run) -> None:
    """Refuse to resume ``run`` once it succeeded, or once its input guard refused its input
    (kept nowhere: nothing is left to answer): its thread goes on in a new run."""
    if run.status is RunStatus.SUCCEEDED:
        raise BlogeUsageError(f"run {run.id!r} already succeeded; continue its thread "
                              f"{run.thread_id!r} with a new run instead")
    guard = run.error.guardrail if run.error is not None else None
    if guard is not None and guard.get("kind") == "input":
        raise BlogeUsageError(f"run {run.id!r} was stopped by its input guard "
                              f"{guard.get('guard')!r}: its input was refused and kept nowhere, "
                              f"so nothing is left to resume; send another input to thread "
                              f"{run.thread_id!r} in a new run")


async def check_not_a_guest(store: Store, run: Run) -> None:
    """Refuse to resume by itself ``run`` when it runs on its caller's thread: it would take
    the thread from its caller, and move its memory view."""
    if run.parent_run_id is None:
        return
    try:
        parent = await store.get_run(run.parent_run_id)
    except StoreNotFoundError:
        return
    if parent.thread_id == run.thread_id:
        raise BlogeUsageError(f"run {run.id!r} runs on the thread of its caller, run "
                              f"{parent.id!r}: resume the caller, which takes it up")


def _current(run: Run, engine: AgentEngine) -> AgentEngine:
    """The engine of the agent ``run`` goes on with: ``engine``'s (the run's own agent's), or
    that of the agent it handed over to, which ``engine``'s handoffs reach."""
    if run.agent == engine.definition.id:
        return engine
    found = engine.find(run.agent)
    if found is None:
        raise BlogeUsageError(f"run {run.id!r} was handed over to agent {run.agent!r}, which "
                              f"agent {engine.definition.id!r} no longer hands over to")
    return found


async def _run(engine: AgentEngine, recorder: Recorder, ctx: OperatorContext,
               sink: ChunkSink | None, *, input: AgentInput | None = None,
               history: list[LlmMessage] | None = None,
               checkpoint: AgentCheckpoint | None = None,
               pending: PendingRound | None = None,
               tools: Sequence[ToolDefinition] = (),
               effects: RunEffects | None = None) -> AgentOutput:
    # A recorded run's execution id is its run id: the journal and the store agree.
    context = OperatorContext(parent=ctx, execution_id=recorder.run_id)
    observed = _observed(sink, recorder)
    running = RUNNING.set(RunningRun(recorder.run_id, recorder.log))
    try:
        async with recorder.leased():
            start = RunStart(input, history=history or (), checkpoint=checkpoint,
                             pending=pending, tools=tools)
            principal = ctx.principal
            counters = StoreCounters(recorder, agent_id=engine.definition.id,
                                     principal=None if principal is None else principal.name)
            return await engine.run(start, context, observer=recorder, sink=observed,
                                    effects=effects, counters=counters)
    except AgentRunError as error:
        _name_run(error, recorder)
        raise
    except RunPaused as paused:
        # Its calls as the store keeps them: the engine knows no expiry, nor, in a round
        # that pauses again, when each was first asked.
        paused.pending = await as_stored(recorder.store, recorder.run_id, paused)
        raise
    except asyncio.CancelledError as cancelled:
        if isinstance(cancelled.__cause__, AgentRunError):
            _name_run(cancelled.__cause__, recorder)
        raise
    finally:
        RUNNING.reset(running)


def _name_run(error: AgentRunError, recorder: Recorder) -> None:
    """The failed run's ids, so that whoever catches the error can resume it."""
    error.run_id = recorder.run_id
    error.thread_id = recorder.thread_id


def _observed(sink: ChunkSink | None, recorder: Recorder) -> ChunkSink | None:
    if sink is None:
        return None

    async def observed(chunk: Any) -> None:
        recorder.chunk(chunk)
        await recorder.flush_if_due()
        await sink(chunk)

    return observed


async def _unfinished(recorder: Recorder, error: BaseException, *,
                      usage: AgentUsage | None = None, turns: int = 0) -> None:
    """Record the end of a run that failed before the loop could (while loading its thread,
    say), so that its thread is freed at once rather than when its lease runs out. ``usage``
    and ``turns``: what its record counted when it was taken up (a resumed run's), which
    its end keeps; a new run's are none."""
    if recorder.finished_writing or recorder.lost or recorder.ended:
        return  # written, another worker's, or tried by the loop already
    reason = "error" if isinstance(error, Exception) else "cancelled"
    # No view: the thread keeps its own, and a resume starts the run from its input.
    await recorder.finished(reason, transcript=(), view=None,
                            usage=AgentUsage() if usage is None else usage, turns=turns,
                            output=None, error=error)


async def _history(store: Store, thread_id: str, view: Any,
                   recorder: Recorder) -> list[LlmMessage]:
    if not view:
        return []
    return await _known(store, thread_id, view, recorder)


async def _known(store: Store, thread_id: str, view: Any,
                 recorder: Recorder) -> list[LlmMessage]:
    resolved = await store.resolve_view(thread_id, view)
    recorder.know(m for m in resolved if isinstance(m, StoredMessage))
    return [m.message if isinstance(m, StoredMessage) else m for m in resolved]


async def _assistant(store: Store, thread_id: str, call: ToolCallRecord,
                     recorder: Recorder) -> LlmMessage:
    (stored,) = await store.resolve_view(thread_id, [(call.message_seq, call.message_seq)])
    assert isinstance(stored, StoredMessage)
    recorder.know([stored])
    return stored.message


def _pending(turn: int, assistant: LlmMessage, calls: list[ToolCallRecord]) -> PendingRound:
    response = LlmResponse(assistant.content, "tool_calls", tool_calls=assistant.tool_calls)
    results = {c.call_id: RecordedResult(bool(c.success), c.content or "", c.text_result)
               for c in calls if c.status == "completed"}
    return PendingRound(turn, response, results)


def _results(calls: list[ToolCallRecord]) -> dict[str, Any]:
    """The successful results of a completed round, as the checkpoint holds them."""
    return {c.call_id: (c.content if c.text_result else DEFAULT_CODEC.decode(c.content or "null"))
            for c in calls if c.success}
