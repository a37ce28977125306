"""``TemporalRunStore``: an agent operator's ``store=`` that runs each run as a workflow.

Given to an ``AgentLoopOperator`` (or a streaming one) as its store, it makes every run of
the operator a Temporal workflow served by ``bloge worker`` processes — so ``bloge serve``
starts runs on the workers with no change of its own. The run's id is its workflow id; its
events, written to the run store by the workers, are read back and handed on as they come:
to the operator's chunk sink, and to this process's watchers of the run (``store.live``),
which is how a server streams them. Its ``listeners`` are told of the run's listener events
as they are relayed (``bloge serve``'s metrics: the workers notify their own listeners, so
give here only those that must see the runs this process starts, such as counters).
A run whose call waits for approval, or for a result posted from outside (an external tool,
a tool of the run's own such as a ``/v1`` client's: ``record_run(tools=…)``), raises
:class:`~bloge.agent.RunPaused` here while its workflow waits (see
:mod:`bloge.temporal.waiting`); decisions and results are taken in the store and sent to the
workflow by :meth:`TemporalRunStore.resume_recorded_run`, as ``aresume_run`` (and so
``bloge serve``, ``/v1`` and ``bloge approvals``) continue any paused run. Cancelled through
:meth:`TemporalRunStore.cancel_run` (``bloge runs cancel``, ``bloge serve``), a run's workflow
is cancelled at once: a running run stops without waiting for a worker's lease renewal, and
a paused run's workflow ends rather than wait for answers to a run that is over. A run that
ended without succeeding (out of turns, failed, cancelled) is resumed by its id as a local
one is (:meth:`TemporalRunStore.take_up`): a new execution of its workflow takes it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from bloge.agent import (
    AgentCallbackContext,
    AgentCheckpoint,
    AgentExecutionListener,
    AgentInput,
    AgentOutput,
    Decision,
    GuardCheckedPayload,
    HandoffPayload,
    LlmCalledPayload,
    LoopExitedPayload,
    MemorySummarizedPayload,
    PendingCall,
    RunPaused,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.agent.runtime import (
    CALLBACKS,
    AgentEngine,
    Callback,
    ChunkSink,
    ListenerChain,
    PendingRound,
    check_priced,
)
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.llm import LlmResponse, ToolCall, ToolDefinition
from bloge.store import (
    Run,
    RunEvent,
    RunStatus,
    Store,
    check_not_a_guest,
    check_resumable,
    decide_call,
    event_chunk,
    post_tool_results,
    posted_results,
    round_calls,
    run_tools,
)
from bloge.temporal.connection import Connection, connect
from bloge.temporal.limits import (
    LimitsRefusedError,
    kept_limits,
    refuse_thread_budget,
    refuse_unkept,
)
from bloge.temporal.options import MAX_PAYLOAD_BYTES
from bloge.temporal.runner import TemporalRunner

#: How often the run's events are read from the store while it runs, in seconds.
POLL_SECONDS = 0.05
#: How long the last events may take to appear after the run's output, in seconds.
DRAIN_SECONDS = 5.0
_END = frozenset({"done", "error"})
_PAUSES = frozenset({"approval_required", "tool_results_required"})
#: A listener event's type (its callback's name) → the callback and its payload's class.
_PAYLOADS: dict[str, tuple[Callback, type[Any]]] = {
    callback: (callback, kind) for callback, kind in zip(CALLBACKS, (
        TurnStartedPayload, LlmCalledPayload, ToolDispatchedPayload, ToolCompletedPayload,
        LoopExitedPayload, GuardCheckedPayload, HandoffPayload, MemorySummarizedPayload),
        strict=True)}
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
        """Run ``input`` as a new run ``run_id`` (a new id when ``None``) on ``thread_id``
        (a new thread when ``None``), a workflow on the workers, followed until it ends or
        waits (:class:`~bloge.agent.RunPaused`). It runs with ``engine``'s ``max_turns`` and
        run budget (the operator's, retuned or not), as a local run does: its limits but
        ``time``, which a workflow does not keep (see :mod:`bloge.temporal.limits`); one
        with a thread budget is refused before it starts."""
        definition = engine.definition
        refuse_thread_budget(definition)
        run = run_id or new_id()
        thread = thread_id or new_id()
        runner = await self.runner()
        self.store.live.started(run)
        try:
            await runner.start(definition.id, input, run_id=run, thread_id=thread,
                               max_turns=definition.max_turns,
                               budget=kept_limits(definition.budget), principal=ctx.principal,
                               tools=tools)
            return await self._follow(runner, run, thread, sink)
        finally:
            self.store.live.ended(run)

    async def check_resume(self, engine: AgentEngine, run_id: str,
                           ctx: OperatorContext) -> None:
        """Refuse a resume of run ``run_id`` with ``engine`` as :meth:`resume_recorded_run`
        does before it sends anything."""
        _check_resumable(await self.store.get_run(run_id), engine)

    async def decide_run(self, run_id: str, *, decisions: Mapping[str, Decision],
                         tool_results: Mapping[str, Any], principal: str | None) -> None:
        """Record ``decisions`` on, and ``tool_results`` of, the waiting calls of the paused
        run ``run_id`` in the store, as a local run's are (:func:`bloge.store.decide_call`,
        :func:`bloge.store.post_tool_results`); the workflow is told by
        :meth:`resume_recorded_run`."""
        for call_id, decision in decisions.items():
            await decide_call(self.store, run_id, call_id, approve=decision.approved,
                              reason=decision.reason, principal=principal or decision.principal)
        if tool_results:
            await post_tool_results(self.store, run_id, tool_results, principal=principal)

    async def resume_recorded_run(self, engine: AgentEngine, run_id: str, ctx: OperatorContext,
                                  *, sink: ChunkSink | None) -> AgentOutput:
        """Continue run ``run_id``, which waits: its workflow — and those of the paused
        runs it waits on, its child workflows' — are sent the decisions and results taken
        in the store (see :mod:`bloge.temporal.waiting`), and it is followed until it ends,
        or waits again (:class:`~bloge.agent.RunPaused`). It goes on with ``engine``'s
        ``max_turns`` and run budget, as a local run resumed does: a run whose own calls
        wait is sent them with its answers (as :meth:`go_on` sends new limits); one that
        waits on its sub-agent's run alone goes on with its own, for its workflow is inside
        the round that asked and takes none there. One that ended without succeeding goes
        on from its last checkpoint with them (:meth:`take_up`)."""
        stored = await self.store.get_run(run_id)
        _check_resumable(stored, engine)
        max_turns, budget = engine.definition.max_turns, kept_limits(engine.definition.budget)
        if stored.status.finished:
            return await self.take_up(stored, sink=sink, principal=ctx.principal,
                                      max_turns=max_turns, budget=budget)
        if not stored.status.paused or not await round_calls(self.store, run_id):
            return await self.go_on(run_id, sink=sink)
        # Not refused as go_on refuses them: these are the operator's own limits, not ones
        # asked for; a run another resume took back meanwhile goes on with that one's.
        return await self._answered(stored, sink, max_turns=max_turns, budget=budget)

    @staticmethod
    def check_limits(budget: Mapping[str, Any]) -> None:
        """Refuse the budget limits a resume asks for (``{"tokens": 80000, "thread":
        {…}}``, a ``POST /runs/{id}/resume`` body's) that a workflow does not keep, as
        ``bloge runs resume --budget`` refuses them: see
        :func:`~bloge.temporal.limits.refuse_unkept`. (A ``usd`` limit on a model without a
        price is refused for any run, by the server: ``runs_api``.)"""
        refuse_unkept(budget)

    async def go_on(self, run_id: str, *, sink: ChunkSink | None = None,
                    max_turns: int | None = None,
                    budget: Mapping[str, Any] | None = None,
                    principal: Principal | None = None) -> AgentOutput:
        """Run ``run_id``'s output: paused, its workflows are sent the answers taken in the
        store (:meth:`send_answers`) — :class:`~bloge.agent.RunPaused` while a call still
        waits — and it is followed from its last event on (:meth:`follow`); one its workflow
        took back already (the answers were sent by whoever gave them) is followed so too.
        A run that ended without succeeding (failed, out of turns, cancelled) goes on from
        its last checkpoint, as a local run resumed (:meth:`take_up`); one that succeeded is
        refused. ``bloge run --wait`` and ``bloge runs resume`` go on with a run this way.

        ``max_turns`` and ``budget`` (its run budget's limits raised or set, ``{"tokens":
        80000}``; not ``time``, which a workflow does not keep) hold for the rest of the run,
        as for a local run resumed with them: sent to its workflow before the answers that
        let it go on. A run whose own calls do not wait — it runs, or waits on a sub-agent's
        run — is inside its round, where its workflow takes no new limits: they are refused
        (:class:`~bloge.temporal.limits.LimitsRefusedError`, a ``BlogeUsageError``)."""
        stored = await self.store.get_run(run_id)
        if stored.status.finished:
            return await self.take_up(stored, sink=sink, max_turns=max_turns, budget=budget,
                                      principal=principal)
        if max_turns is not None or budget:
            await self._takes_limits(stored, max_turns=max_turns, budget=budget)
        return await self._answered(stored, sink, max_turns=max_turns, budget=budget)

    async def _answered(self, stored: Run, sink: ChunkSink | None, *, max_turns: int | None,
                        budget: Mapping[str, Any] | None) -> AgentOutput:
        """``stored``'s output once its workflows are sent the answers (and, paused, the
        limits) taken in the store: see :meth:`go_on`."""
        if stored.status.paused and await self.send_answers(stored.id, max_turns=max_turns,
                                                            budget=budget):
            raise await self._paused(stored.id)  # it goes on once the others are decided
        seen = await self.store.run_events(stored.id)
        return await self.follow(stored.id, stored.thread_id, sink,
                                 after=seen[-1].seq if seen else 0)

    async def take_up(self, run: Run, *, sink: ChunkSink | None = None,
                      max_turns: int | None = None, budget: Mapping[str, Any] | None = None,
                      principal: Principal | None = None) -> AgentOutput:
        """Go on with ``run``, which ended without succeeding, from its last checkpoint in
        the store, as a local run is resumed: a new execution of its workflow (the same id)
        whose first activity takes the run back in the store (running again, the same run
        on the same thread, its turns and usage going on), with ``max_turns`` and
        ``budget`` from there; followed as :meth:`follow` does. A run that succeeded, a run
        on its caller's thread and one that kept no checkpoint (cancelled while it waited for
        answers, or before its first turn) are refused
        (:class:`~bloge.core.errors.BlogeUsageError`)."""
        check_resumable(run)
        await check_not_a_guest(self.store, run)
        if await self.store.latest_checkpoint(run.id) is None:
            raise BlogeUsageError(
                f"run {run.id!r} is {run.status.value} and ran on Temporal, where it kept no "
                f"checkpoint to go on from (it ended while it waited, or before its first "
                f"turn); go on with its conversation in a new run on its thread (bloge run "
                f"{run.agent_id} --thread {run.thread_id} …)")
        runner = await self.runner()
        tools = await run_tools(self.store, run.id)
        seen = await self.store.run_events(run.id)
        try:
            await runner.start(run.agent_id, run_id=run.id, thread_id=run.thread_id,
                               max_turns=max_turns, budget=budget, principal=principal,
                               tools=tools, resume=True)
        except WorkflowAlreadyStartedError:  # its workflow records its end before it closes
            raise BlogeUsageError(f"run {run.id!r} is {run.status.value}, and its workflow on "
                                  "Temporal has not closed yet; resume it again in a moment"
                                  ) from None
        return await self.follow(run.id, run.thread_id, sink,
                                 after=seen[-1].seq if seen else 0)

    async def follow(self, run_id: str, thread_id: str | None, sink: ChunkSink | None, *,
                     after: int = 0) -> AgentOutput:
        """The output of run ``run_id``, started on the workers, its events after ``after``
        relayed meanwhile (to this process's watchers, the listeners and ``sink``);
        :class:`~bloge.agent.RunPaused`, as its record in the store says, once it waits for
        approval or results (its workflow waits on). A failure names ``thread_id``."""
        runner = await self.runner()
        self.store.live.started(run_id)
        try:
            return await self._follow(runner, run_id, thread_id, sink, after=after)
        finally:
            self.store.live.ended(run_id)

    async def send_answers(self, run_id: str, *, max_turns: int | None = None,
                           budget: Mapping[str, Any] | None = None) -> bool:
        """Send the paused run ``run_id``'s workflow, and those of the paused runs it
        started (at any depth: its child workflows'), the decisions and results taken in the
        store for their waiting calls: whether a call of theirs still waits. Their workflows
        go on by themselves once none does (:meth:`resume_recorded_run` follows the run
        too); ``run_id``'s with ``max_turns`` and ``budget`` if given (see :meth:`go_on`),
        sent only then."""
        runner = await self.runner()
        now = self.store.clock()
        calls = await round_calls(self.store, run_id)
        waits = any(row.state == "waiting" and not row.expired(now) for row in calls)
        for child in await self.store.child_runs(run_id):
            if child.status.paused:
                waits = await self.send_answers(child.id) or waits
        # The round these rows are of: a resumer that read them before the round went on
        # sends its answers and limits to a later round, which drops them (it may reuse
        # their call ids).
        turn = calls[0].turn if calls else None
        if not waits and (max_turns is not None or budget):
            await runner.limit(run_id, max_turns=max_turns, budget=budget, turn=turn)
        if turn is None:
            return waits
        decided = {row.call_id: Decision(approved=row.state == "approved", reason=row.reason,
                                         principal=row.decided_by)
                   for row in calls if row.state in ("approved", "denied")}
        results = await posted_results(self.store, run_id, turn=turn)
        if decided or results:
            await runner.answer(run_id, decided, results, turn=turn)
        return waits

    async def _takes_limits(self, run: Run, *, max_turns: int | None,
                            budget: Mapping[str, Any] | None) -> None:
        """Refuse new limits (``max_turns``, ``budget``) for ``run`` unless its own calls
        wait: only there does its workflow take them (see :meth:`go_on`)."""
        if not run.status.paused:
            raise LimitsRefusedError(
                f"run {run.id!r} is {run.status.value} on Temporal, where new limits (",
                ") reach a run only as its paused round goes on, and its workflow took it "
                f"back already; follow it without them (bloge runs resume {run.id})",
                max_turns=max_turns, budget=budget)
        if not await round_calls(self.store, run.id):
            children = [child.id for child in await self.store.child_runs(run.id)
                        if child.status.paused]
            raise LimitsRefusedError(
                f"run {run.id!r} waits on its sub-agent's run ({', '.join(children)}) on "
                "Temporal, where its workflow is inside the round that asked it and takes no"
                " new limits (", f") there; go on without them (bloge runs resume {run.id}),"
                " and give them once its own calls wait or it stopped",
                max_turns=max_turns, budget=budget)

    async def cancel_run(self, run_id: str, *, owner: str | None = None) -> Run:
        """Ask run ``run_id`` to stop, as :meth:`bloge.store.Store.cancel_run` does (with
        ``owner``, only that principal's run), and cancel its workflow here: a running run's
        workflow ends cancelled at once (its running activities hear it at their next
        heartbeat), recorded ``cancelled`` by its last activity as a local run is, rather
        than when a worker next renews its lease; a run the store cancels at once — a paused
        one, whose workflow waits for answers and runs nothing that would hear the ask — has
        its workflow end too, and so the child workflows it waits on: no workflow waits on
        for a run the store says is over, and an answer sent afterwards is refused as for a
        cancelled local run."""
        run = await self.store.cancel_run(run_id, owner=owner)
        if run.status is RunStatus.CANCELLED or run.cancel_requested:
            runner = await self.runner()
            try:
                await runner.cancel(run.id)
            except RPCError as error:  # it ended already (cancelled before, say)
                _log.debug("the workflow of run %s was not cancelled: %s", run.id, error)
        return run

    async def _follow(self, runner: TemporalRunner, run: str, thread: str | None,
                      sink: ChunkSink | None, *, after: int = 0) -> AgentOutput:
        """The output of run ``run``, its events relayed meanwhile (those after ``after``);
        :class:`~bloge.agent.RunPaused` once it waits for approval (its workflow waits on)."""
        ended = asyncio.Event()
        relay = asyncio.create_task(self._relay(run, sink, ended, after=after))
        waiting = asyncio.ensure_future(runner.result(run))
        try:
            await asyncio.wait((relay, waiting), return_when=asyncio.FIRST_COMPLETED)
            if (not waiting.done() and relay.done() and not relay.cancelled()
                    and relay.exception() is None and relay.result()):
                waiting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiting
            else:
                return await waiting
        except asyncio.CancelledError:
            # The caller gave up (Ctrl-C, a client that left): so does the workflow.
            waiting.cancel()
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
        raise await self._paused(run)

    async def _paused(self, run_id: str) -> RunPaused:
        """The pause of run ``run_id`` as its record in the store says: its waiting calls,
        its child workflows' too (each naming its run). Its checkpoint stays with its
        workflow (the one given holds its turns and usage, not its conversation): a Temporal
        run is resumed by its id."""
        stored = await self.store.get_run(run_id)
        rows = stored.pending_approvals
        calls = tuple(PendingCall(row.call_id, row.tool, row.arguments,
                                  "approval" if row.kind == "approval" else "external",
                                  row.hash, row.requested_at, row.expires_at,
                                  run_id=None if row.run_id == run_id else row.run_id)
                      for row in rows)
        response = LlmResponse(finish_reason="tool_calls", tool_calls=tuple(
            ToolCall(row.call_id, row.tool, row.arguments) for row in rows))
        return RunPaused(run_id=run_id, status=(
                             "awaiting_tool_results"
                             if stored.status is RunStatus.AWAITING_TOOL_RESULTS
                             else "awaiting_approval"), pending=calls,
                         checkpoint=AgentCheckpoint((), stored.turns, {}, stored.agent_id,
                                                    stored.usage),
                         tool_round=PendingRound(stored.turns, response, {}),
                         thread_id=stored.thread_id)

    async def _relay(self, run_id: str, sink: ChunkSink | None, ended: asyncio.Event, *,
                     after: int = 0) -> bool:
        """The run's events from the store after ``after``, until its last, to the live
        watchers, the listeners and the sink; read every ``POLL_SECONDS``, and once at once
        when the run has ``ended``. ``True`` once the run waits for approval."""
        while True:
            events = await self.store.run_events(run_id, after=after)
            if any(event.type in _PAUSES for event in events) and (
                    await self.store.get_run(run_id)).status.paused:
                for event in events:  # written with the pause, in one transaction
                    self.store.live.publish(event)
                    chunk = event_chunk(event)
                    if sink is not None and chunk is not None:
                        await sink(chunk)
                return True
            for event in events:
                after = event.seq
                self.store.live.publish(event)
                if self.listeners:
                    self._notify(event)
                chunk = event_chunk(event)
                if sink is not None and chunk is not None:
                    await sink(chunk)
                if event.type in _END:
                    return False
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


def _check_resumable(stored: Run, engine: AgentEngine) -> None:
    """Refuse a resume of ``stored`` with ``engine`` before anything is sent: of a run its
    workflow still runs, or with limits a workflow does not keep (a ``usd`` limit on a model
    without a price, as a local resume's ledger refuses it; a thread budget): the run waits
    on, for a resume with other limits."""
    if not stored.status.paused and not stored.status.finished:
        raise BlogeUsageError(f"run {stored.id!r} runs on Temporal, which continues it by "
                              "itself after a crash; there is nothing to resume")
    check_priced(engine.definition, engine.budgets)
    refuse_thread_budget(engine.definition)
