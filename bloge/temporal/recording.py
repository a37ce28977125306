"""``StoreRecording``: a Temporal run kept in the run store, as a local run is.

The run's workflow id is its run id. Its first activity starts the run on its thread (the
thread's memory view is the run's history, handed to the workflow by reference and read in
pages of half ``max_payload_bytes`` at most); each model and tool activity writes the
listener callbacks and stream chunks it produced as the run's events, numbered by the store
(activities of one run run on any worker), so that ``bloge runs show`` gives the same
timeline and any ``bloge serve`` replica can relay the run. The run's new messages go to the
thread's log as it goes, numbered by the workflow: each model activity writes those of the
turn before and reads its memory view back from the log by reference, so that no payload
carries the view; a run that continues as new writes its messages and its progress first (a
checkpoint of its view by reference); its last activity writes the last messages and ends
the run. Temporal holds the run's progress, so the store keeps no per-turn checkpoints (one
at each continue-as-new) or tool ledger for it: a crashed worker's run is continued by
Temporal, not by ``bloge runs resume``; one that ended (out of turns, failed, cancelled) is
taken back from its last checkpoint by a new execution of its workflow
(:meth:`StoreRecording.take_up`).

A sub-agent's child workflow on its caller's thread (``thread = "parent"``) is a guest there
(:meth:`StoreRecording.join`): it neither takes nor frees the thread, its messages are
numbered by the store as they are written (:meth:`StoreRecording.append_guest`), and its end
leaves the thread's view as it is (:meth:`StoreRecording.finish_guest`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bloge.agent import AgentStreamChunk, AgentUsage, ChildWait, PendingCall
from bloge.core.context import Principal
from bloge.core.tracecontext import TraceParent
from bloge.llm import LlmResponse
from bloge.llm.messages import LlmMessage
from bloge.store import (
    Run,
    RunEvent,
    RunStatus,
    RunWriter,
    Store,
    StoredMessage,
    StoreNotFoundError,
    StoreWriter,
)
from bloge.store.recording import (
    EVENT_FLUSH_SECONDS,
    await_calls,
    callback_events,
    chunk_event,
    end_event,
    ops,
    segments,
    traced,
)
from bloge.temporal import wire
from bloge.temporal.relay import relayed
from bloge.temporal.wire import View, view_to_json

#: How many messages of a thread's log one read of :meth:`StoreRecording.read` asks for.
READ_BATCH = 64
#: What a run that no one stopped is (a caller waiting on its child workflow runs no activity
#: of its own: its children's renew its lease, and when none ran for a lease — every worker
#: stopped, say — it looks interrupted).
_GOING = frozenset({RunStatus.RUNNING, RunStatus.INTERRUPTED})


class StoreRecording:
    """Writes the Temporal runs of one worker's agents into ``store``, through ``writer``
    (the store's own :class:`StoreWriter` by default); ``worker`` is the owner the store
    records (the task queue's, since any of its workers may write)."""

    __slots__ = ("store", "worker", "writer")

    def __init__(self, store: Store, *, worker: str, writer: RunWriter | None = None) -> None:
        self.store = store
        self.worker = worker
        self.writer = writer if writer is not None else StoreWriter(store)

    async def begin(self, *, run_id: str, thread_id: str, agent_id: str,
                    input: Sequence[LlmMessage], metadata: Mapping[str, Any],
                    principal: Principal | None = None,
                    trace_parent: str | None = None,
                    tools: Sequence[Mapping[str, Any]] = (),
                    parent_run_id: str | None = None,
                    resume: bool = False) -> dict[str, Any]:
        """Start the run on its thread (again, when this is a retry of the same start):
        where the thread's log goes on (``next_seq``) and the history the run starts after,
        as ``[seq, message]`` pairs (``seq`` ``None`` for a summary the log does not hold).
        The run and a new thread are ``principal``'s, as a local recorded run's are;
        ``trace_parent`` is the trace context it was started in, and ``tools`` its own
        tools (as :func:`bloge.store.paused.tool_json` gives them), kept with it;
        ``parent_run_id`` the run whose sub-agent call started it (a child workflow).
        With ``resume``, the run ended (failed, out of turns, cancelled) and is taken back
        instead (see :meth:`take_up`)."""
        if resume:
            return await self.take_up(run_id)
        try:
            run = await self.store.get_run(run_id)
        except StoreNotFoundError:
            claim = await self.writer.start_run(run_id=run_id, thread_id=thread_id,
                                                agent_id=agent_id, input=input,
                                                metadata=dict(metadata), worker=self.worker,
                                                owner=principal.name if principal else None,
                                                own_thread_only=principal is not None
                                                and not principal.admin)
        else:  # a retried start: the thread is this run's already, its lease maybe too
            claim = await self.writer.reclaim_run(run, worker=self.worker, retried_start=True)
        kept: list[ops.Op] = []
        if trace_parent and TraceParent.from_stored(trace_parent) is not None:
            kept.append(ops.TraceRun(run_id, trace_parent))
        if tools:
            kept.append(ops.KeepRunTools(run_id, tuple(tools)))
        if parent_run_id is not None:
            kept.append(ops.ParentRun(run_id, parent_run_id))
        if kept:
            await self.writer.write(kept)
        return {"next_seq": claim.next_seq, "view": view_to_json(claim.view or ())}

    async def take_up(self, run_id: str) -> dict[str, Any]:
        """Take back run ``run_id``, which ended, to go on from its last checkpoint, as a
        local run is resumed (:meth:`~bloge.store.RunWriter.reclaim_run`: running again,
        with its thread): where the thread's log goes on (``next_seq``), the checkpoint's
        view by reference (``view``), and what the run goes on from (``resumed``: its
        ``turns``, ``usage`` and the ``agent`` it goes on with). A retry once it runs on
        this task queue's workers takes nothing."""
        run = await self.store.get_run(run_id)
        checkpoint = await self.store.latest_checkpoint(run_id)
        if checkpoint is None:
            raise StoreNotFoundError(f"run {run_id!r} has no checkpoint to go on from",
                                     store=self.store.url)
        if run.status is RunStatus.RUNNING and run.worker == self.worker:
            next_seq = await self.log_end(run.thread_id)
        else:
            next_seq = (await self.writer.reclaim_run(run, worker=self.worker)).next_seq
        # Its model is asked the rounds after the checkpoint anew: the calls they waited on
        # go, or one asked again by the same id (c1) would find its old row, decided (or
        # with other arguments), and none of its own would wait.
        await self.writer.write([ops.ForgetPendingCalls(run_id, checkpoint.turn)])
        return {"next_seq": next_seq, "view": view_to_json(checkpoint.view),
                "resumed": {"turns": checkpoint.turn, "usage": checkpoint.usage.to_dict(),
                            "agent": run.agent}}

    async def join(self, *, run_id: str, thread_id: str, holder: str, parent_run_id: str,
                   agent_id: str, input: Sequence[LlmMessage],
                   principal: Principal | None = None,
                   trace_parent: str | None = None) -> None:
        """Start a guest run on ``thread_id`` under the hold of run ``holder`` (the child
        workflow of a sub-agent on its caller's thread, see
        :mod:`bloge.agent.caller_thread`), a child of run ``parent_run_id``, without taking
        the thread: again when this is a retry of the same start (a run this task queue's
        workers run already is left as it is), taken back when it stopped.
        :class:`~bloge.store.ThreadBusyError` when ``holder`` no longer holds the thread."""
        try:
            run = await self.store.get_run(run_id)
        except StoreNotFoundError:
            await self.writer.join_run(run_id=run_id, thread_id=thread_id, holder=holder,
                                       parent_run_id=parent_run_id, agent_id=agent_id,
                                       input=input, worker=self.worker,
                                       owner=principal.name if principal else None)
        else:
            if not (run.status is RunStatus.RUNNING and run.worker == self.worker):
                await self.writer.rejoin_run(run, holder=holder, worker=self.worker)
        if trace_parent and TraceParent.from_stored(trace_parent) is not None:
            await self.writer.write([ops.TraceRun(run_id, trace_parent)])

    async def append_guest(self, *, run_id: str, thread_id: str, holder: str, first: int,
                           messages: Sequence[LlmMessage]) -> list[int]:
        """Write ``messages`` of guest run ``run_id`` (see :meth:`join`) to the thread's
        log, numbered by the store as they are written (the guests of one thread, child
        workflows on any worker, share no counter): their numbers, which the run's workflow
        keeps from this activity's result. ``first``: how many the run wrote before (a retry
        gets those it wrote already back)."""
        if not messages:
            return []
        return list(await self.writer.append_guest_messages(
            run_id=run_id, thread_id=thread_id, holder=holder, first=first,
            messages=messages))

    async def log_end(self, thread_id: str) -> int:
        """The number the thread's log goes on with: what a holder numbers its next message
        with once its guests are done (they numbered theirs in the store)."""
        return (await self.store.get_thread(thread_id)).message_count + 1

    async def read(self, thread_id: str, view: View, max_bytes: int) -> dict[str, Any]:
        """The first messages of ``view`` (a thread's view by reference), as ``[seq,
        message]`` pairs (``seq`` ``None`` for one held inline), about ``max_bytes`` of them
        at most (always one), and the rest of the view."""
        pairs: list[list[Any]] = []
        used = 0
        rest = list(view)
        while rest:
            part = rest[0]
            if isinstance(part, LlmMessage):
                found: list[tuple[int | None, LlmMessage]] = [(None, part)]
            else:
                last = min(part[1], part[0] + READ_BATCH - 1)
                found = [(m.seq, m.message) for m in await self.store.resolve_view(
                    thread_id, [(part[0], last)]) if isinstance(m, StoredMessage)]
            for seq, message in found:
                data = message.to_dict()
                cost = wire.size(data)
                if pairs and used + cost > max_bytes:
                    return {"messages": pairs, "rest": view_to_json(tuple(rest))}
                pairs.append([seq, data])
                used += cost
                head = rest[0]
                if isinstance(head, tuple) and seq is not None and seq < head[1]:
                    rest[0] = (seq + 1, head[1])
                else:
                    rest.pop(0)
        return {"messages": pairs, "rest": []}

    async def append(self, *, run_id: str, thread_id: str,
                     messages: Sequence[tuple[int, LlmMessage]], turns: int | None = None,
                     view: View | None = None, usage: AgentUsage | None = None) -> None:
        """Write ``messages`` (numbered by the run) to the thread's log, those a retry of
        this call wrote already left out; with ``turns``, the run's progress too (its view
        by reference, its usage)."""
        now = time.time()
        batch: list[ops.Op] = []
        if messages:
            first = min(seq for seq, _ in messages)
            have = {m.seq for m in await self.store.thread_messages(
                thread_id, after=first - 1, limit=len(messages))}
            fresh = tuple(StoredMessage(thread_id, seq, message, run_id)
                          for seq, message in messages if seq not in have)
            batch.append(ops.AppendMessages(thread_id, fresh, now))
        if turns is not None and view is not None and usage is not None:
            batch.append(ops.SaveCheckpoint(run_id, turns, view, usage.to_dict(), now))
        if batch:
            await self.writer.write(batch)

    async def pause(self, *, run_id: str, turn: int, status: str,
                    calls: Sequence[PendingCall], turns: int, usage: AgentUsage,
                    callers: Sequence[Mapping[str, Any]] = ()) -> dict[str, float | None]:
        """Store the run as paused (``status``) on ``calls`` of ``turn``, as a local run that
        pauses is (see :mod:`bloge.store.paused`): a row a call, an ``approval_required``
        event each, and its status, in one transaction; when each call's approval expires
        (``None``: never). A retry of a pause written already reads them back.
        ``callers``: a child workflow's, the runs that wait on it (``run_id``, and the
        ``call_id`` and ``tool`` of the call that waits), nearest first: each is paused
        too, in the same transaction, as a local caller whose sub-agent paused is."""
        run = await self.store.get_run(run_id)
        if run.status is not RunStatus.RUNNING:  # its own calls' rows, not its sub-agents'
            return {row.call_id: row.expires_at for row in run.pending_approvals
                    if row.run_id == run_id}
        now = self.store.clock()
        waiting = await_calls(self.store, run_id, turn, calls)
        kinds = {"approval": "approval_required"}
        events = tuple(RunEvent(run_id, 0, kinds.get(call.kind, "tool_results_required"), now,
                                {**call.to_dict(), "turn": turns, "run_id": run_id})
                       for call in waiting.calls)
        await self.writer.write([
            waiting, ops.AppendRunEvents(run_id, events, now),
            ops.PauseRun(run_id, RunStatus(status), turns, usage.to_dict(), now),
            *await self._callers_paused(run_id, status, waiting.calls, callers, now)])
        return {call.call_id: call.expires_at for call in waiting.calls}

    async def _callers_paused(self, run_id: str, status: str, calls: Sequence[PendingCall],
                              callers: Sequence[Mapping[str, Any]], now: float) -> list[ops.Op]:
        """The writes that pause the callers of run ``run_id`` that waits on ``calls``, as
        :func:`bloge.store.paused.pause_ops` pauses a local caller: a ``subagent_paused``
        event for the call that waits, an event per waiting call naming the run that holds
        it, and its status (a caller paused on another sub-agent already stays as it is).
        Stops at a caller that ended (it no longer waits on anyone)."""
        batch: list[ops.Op] = []
        below = run_id
        held = tuple(replace(call, run_id=run_id) for call in calls)
        for caller in callers:
            caller_id = str(caller["run_id"])
            try:
                run = await self.store.get_run(caller_id)
            except StoreNotFoundError:
                break
            if not (run.status.paused or run.status in _GOING):
                break
            wait = ChildWait(str(caller["call_id"]), str(caller["tool"]), below,
                             "awaiting_tool_results" if status == "awaiting_tool_results"
                             else "awaiting_approval", held)
            events = [RunEvent(caller_id, 0, "subagent_paused", now,
                               {**wait.to_dict(), "turn": run.turns})]
            events.extend(RunEvent(caller_id, 0, "approval_required" if call.kind == "approval"
                                   else "tool_results_required", now,
                                   {**call.to_dict(), "run_id": caller_id,
                                    "subagent_run_id": run_id}) for call in held)
            batch.append(ops.AppendRunEvents(caller_id, tuple(events), now))
            if not run.status.paused:
                batch.append(ops.PauseRun(caller_id, RunStatus(status), run.turns,
                                          run.usage.to_dict(), now))
            below = caller_id
        return batch

    async def go_on(self, *, run_id: str, turn: int, sent: Sequence[str],
                    expired: Sequence[str], unanswered: Sequence[str] = (),
                    callers: Sequence[Mapping[str, Any]] = ()) -> None:
        """Take the paused run back to continue its round: its ``sent`` (approved) calls
        are handed over (never sent twice unless idempotent), its ``expired`` approvals and
        ``unanswered`` external calls recorded as expired, each with an ``approval_expired``
        or ``tool_results_expired`` event. A retry once it runs does nothing. ``callers``
        (a child workflow's, see :meth:`pause`) that wait on nothing else are taken back
        too, nearest first: they run again, waiting on the run."""
        run = await self.store.get_run(run_id)
        if run.status is RunStatus.RUNNING:
            await self._callers_back(callers)  # a retry: the callers too, if not yet
            return
        await self._take_back(run)
        now = self.store.clock()
        tools = {row.call_id: row.tool for row in run.pending_approvals}
        events = tuple(RunEvent(run_id, 0, kind, now, {
            "call_id": call_id, "tool": tools.get(call_id), "turn": turn})
            for kind, ids in (("approval_expired", expired),
                              ("tool_results_expired", unanswered)) for call_id in ids)
        await self.writer.write([
            *([ops.AppendRunEvents(run_id, events, now)] if events else []),
            ops.HandOver(run_id, turn, tuple(sent), (*expired, *unanswered), now)])
        await self._callers_back(callers)

    async def _callers_back(self, callers: Sequence[Mapping[str, Any]]) -> None:
        """Take back the paused callers that wait on no call now (their sub-agents' runs
        that waited go on), nearest first; stops at one that still waits, or runs."""
        for caller in callers:
            try:
                run = await self.store.get_run(str(caller["run_id"]))
            except StoreNotFoundError:
                return
            if not run.status.paused or run.pending_approvals:
                return
            await self._take_back(run)

    async def _take_back(self, run: Run) -> None:
        """Mark the stopped ``run`` running again: with its thread, or, a guest on its
        caller's thread (see :meth:`join`), under the hold of the caller that holds it."""
        holder = await self._holder_of(run)
        if holder is None:
            await self.writer.reclaim_run(run, worker=self.worker)
        else:
            await self.writer.rejoin_run(run, holder=holder, worker=self.worker)

    async def _holder_of(self, run: Run) -> str | None:
        """The run whose hold on its thread guest ``run`` runs under: its nearest caller on
        another thread's child on this one (``None``: ``run`` is no guest)."""
        holder = None
        below = run
        while below.parent_run_id is not None:
            try:
                caller = await self.store.get_run(below.parent_run_id)
            except StoreNotFoundError:
                break
            if caller.thread_id != run.thread_id:
                break
            holder = below = caller
        return None if holder is None else holder.id

    async def handed_off(self, *, run_id: str, agent_id: str) -> None:
        """The run goes on with agent ``agent_id`` (a handoff): a look at the run shows it."""
        await self.writer.write([ops.HandOffRun(run_id, agent_id, time.time())])

    def events(self, run_id: str, *, watchers: Sequence[Mapping[str, Any]] = (),
               waiting: Sequence[str] = ()) -> RunEvents:
        """The events of an activity of run ``run_id``; its chunks go to ``watchers`` too,
        and its lease's renewals renew those of the runs ``waiting`` on it."""
        return RunEvents(self.store, self.writer, run_id, watchers=watchers, waiting=waiting)

    async def finish(self, *, run_id: str, thread_id: str,
                     messages: Sequence[tuple[int, LlmMessage]], view: View | None,
                     usage: AgentUsage, turns: int, exit_reason: str,
                     output: Mapping[str, Any] | None, error: Mapping[str, str] | None,
                     spans: traced.Spans | None = None,
                     checkpoint_turns: int | None = None) -> None:
        """End the run: its last new ``messages`` in the thread's log (numbered by the run;
        those a retry wrote already left out), its end, the thread's ``view`` (``None``: the
        thread's view stays as it was) and its checkpoint, of ``view`` after
        ``checkpoint_turns`` turns (``turns`` when ``None``; one fewer for a run that ended
        in the middle of a tool round, whose ``view`` is from before it); ``spans``, the
        run's, end with it."""
        if (await self.store.get_run(run_id)).status.finished:
            # A retried finish that was written already. (A caller its child workflow's
            # pause paused in the store, or whose lease ran out while it waited on a child,
            # is ended all the same.)
            return
        await self.append(run_id=run_id, thread_id=thread_id, messages=messages)
        await self._end(run_id=run_id, thread_id=thread_id, view=view, usage=usage,
                        turns=turns, exit_reason=exit_reason, output=output, error=error,
                        spans=spans, checkpoint_turns=checkpoint_turns)

    async def finish_guest(self, *, run_id: str, thread_id: str, holder: str, first: int,
                           messages: Sequence[LlmMessage], usage: AgentUsage, turns: int,
                           exit_reason: str, output: Mapping[str, Any] | None,
                           error: Mapping[str, str] | None,
                           spans: traced.Spans | None = None) -> list[int]:
        """End guest run ``run_id`` (see :meth:`join`): its last new ``messages`` in the
        thread's log as :meth:`append_guest` writes them (their numbers), its end; the
        thread's hold and memory view stay its holder's."""
        ended = (await self.store.get_run(run_id)).status.finished  # a retried finish
        seqs = await self.append_guest(run_id=run_id, thread_id=thread_id, holder=holder,
                                       first=first, messages=messages)
        if not ended:
            await self._end(run_id=run_id, thread_id=thread_id, view=None, usage=usage,
                            turns=turns, exit_reason=exit_reason, output=output, error=error,
                            spans=spans)
        return seqs

    async def _end(self, *, run_id: str, thread_id: str, view: View | None,
                   usage: AgentUsage, turns: int, exit_reason: str,
                   output: Mapping[str, Any] | None, error: Mapping[str, str] | None,
                   spans: traced.Spans | None, checkpoint_turns: int | None = None) -> None:
        """The run's end: its end event, its status, the thread's ``view`` (``None``: as it
        was) and its checkpoint (see :meth:`finish`), the thread let go when the run holds
        it."""
        now = time.time()
        segments = view
        status = RunStatus.ended(exit_reason, succeeded=output is not None)
        kind, body = end_event(exit_reason, output, error)
        failure = None
        if error is not None:
            described = self.store.redactor(None, "", {"error_message": error["message"]})
            failure = {"type": error["type"], "message": described["error_message"]}
        kept: list[ops.Op] = []
        if segments is not None:
            kept.append(ops.SaveCheckpoint(
                run_id, turns if checkpoint_turns is None else checkpoint_turns, segments,
                usage.to_dict(), now))
        await self.writer.write([
            ops.AppendRunEvents(run_id, (RunEvent(run_id, 0, kind, now, body),), now),
            *kept,
            ops.FinishRun(run_id, thread_id, status, exit_reason, turns, usage.to_dict(),
                          output, failure, segments, now),
        ])
        if spans is not None:
            spans.event(kind, body, now)


class RunEvents:
    """The events one activity of run ``run_id`` produces: listener callbacks (redacted as the
    journal's events, :attr:`listener`) and stream chunks, written by ``writer`` at
    :meth:`flush`, and while a stream runs whenever the last write is older than
    ``EVENT_FLUSH_SECONDS``. The chunks of a child workflow go to the callers that
    ``watchers`` lists too (see :mod:`bloge.temporal.relay`), and its :meth:`renew` renews
    the leases of the callers ``waiting`` on it.

    None is shown to ``store``'s live watchers from here, not even in a process that also
    follows the run (a server with a worker beside it): the store numbers a run's events as
    its activities, on any worker, write them, and the run's order is that numbering.
    Whoever follows the run relays what it reads back from the store
    (:class:`~bloge.temporal.runstore.TemporalRunStore`); events shown here too would reach
    its watchers twice, numbered by this activity, and ahead of the events other activities
    wrote before them (a child's chunks, relayed after its caller's ``tool_end``)."""

    __slots__ = ("_flushed_at", "_kept", "_relayed", "listener", "run_id", "spans", "store",
                 "waiting", "watchers", "writer")

    def __init__(self, store: Store, writer: RunWriter, run_id: str, *,
                 watchers: Sequence[Mapping[str, Any]] = (),
                 waiting: Sequence[str] = ()) -> None:
        self.store = store
        self.writer = writer
        self.run_id = run_id
        self.watchers = watchers
        self.waiting = waiting
        self._kept: list[RunEvent] = []
        self._relayed: dict[str, list[RunEvent]] = {}
        self._flushed_at = time.monotonic()
        self.listener = callback_events(store.redactor, self.keep)
        #: The run's spans (:meth:`trace`), when the store traces runs.
        self.spans: traced.Spans | None = None

    async def trace(self, model: str | None = None) -> traced.Spans | None:
        """The run's spans, when the store traces runs: this activity's events add theirs
        to the run's trace (kept with the run), and the calls it makes carry it; ``model``
        is the one the agent asks for."""
        tracing = self.store.tracing
        if tracing is None:
            return None
        if self.spans is None:
            run = await self.store.get_run(self.run_id)
            self.spans = traced.run_spans(
                tracing, run_id=run.id, thread_id=run.thread_id, agent=run.agent_id,
                started_at=run.created_at, parent=TraceParent.from_stored(run.trace_parent),
                model=model, answering=run.agent)
        return self.spans

    def model_call(self, turn: int, messages: Sequence[LlmMessage]) -> None:
        """Model call ``turn`` of the traced run begins here, with ``messages``."""
        if self.spans is not None:
            traced.model_call(self.spans, self.store.redactor, turn, messages,
                              capture=self.store.tracing.capture_content)

    def answered(self, response: LlmResponse) -> None:
        """The model call's answer, for its span when content is captured."""
        if self.spans is not None and self.store.tracing.capture_content:
            traced.answered(self.spans, self.store.redactor, response)

    def keep(self, kind: str, body: Mapping[str, Any], at: float | None = None) -> None:
        """Keep one event (of time ``at``, else now), numbered by the store as it is written;
        callbacks come redacted."""
        event = RunEvent(self.run_id, 0, kind, time.time() if at is None else at, body)
        self._kept.append(event)
        if self.spans is not None:
            self.spans.event(kind, event.body, event.at)

    async def chunk(self, chunk: AgentStreamChunk) -> None:
        kept = chunk_event(chunk)
        if kept is not None:
            self.keep(*kept)
        for run_id, nested in relayed(chunk, self.run_id, self.watchers):
            event = chunk_event(nested)
            if event is not None:
                self._relayed.setdefault(run_id, []).append(
                    RunEvent(run_id, 0, event[0], time.time(), event[1]))
        if time.monotonic() - self._flushed_at >= EVENT_FLUSH_SECONDS:
            await self.flush()

    async def flush(self) -> None:
        kept, self._kept = self._kept, []
        relayed, self._relayed = self._relayed, {}
        self._flushed_at = time.monotonic()
        now = time.time()
        writes = [ops.AppendRunEvents(run_id, tuple(events), now)
                  for run_id, events in ((self.run_id, kept), *relayed.items()) if events]
        if writes:
            await self.writer.write(writes)

    async def renew(self, thread_id: str, worker: str) -> frozenset[str]:
        """Keep the run's lease on its thread while it runs (Temporal runs may be long), and
        those of the callers ``waiting`` on it (a child workflow's, which run nothing while
        they wait; a guest's holder among them, whose hold the guest writes under); which
        of these runs someone asked the store to cancel (``bloge runs cancel``, the
        server's ``POST /runs/{id}/cancel``): each ask is its run's own, a caller's is not
        its child's."""
        asked = await self.writer.renew_lease(run_id=self.run_id, thread_id=thread_id,
                                              worker=worker)
        callers = await self.writer.renew_waiting(run_ids=self.waiting, worker=worker)
        return callers | {self.run_id} if asked else callers


def numbered(next_seq: int, history: Sequence[tuple[int | None, LlmMessage]],
             transcript: Sequence[LlmMessage],
             view: Sequence[LlmMessage]) -> tuple[list[tuple[int, LlmMessage]], View]:
    """A finish of a workflow begun before runs wrote their messages as they went: the
    transcript's new messages, numbered from ``next_seq`` (it starts with the ``history``, a
    system prompt maybe first: the messages the log holds are referred to), and ``view`` by
    reference to the log."""
    known = [(seq, message) for seq, message in history if seq is not None]
    fresh: list[tuple[int, LlmMessage]] = []
    seq, matched = next_seq, 0
    for message in transcript:
        if matched < len(known) and message == known[matched][1]:
            matched += 1
            continue
        fresh.append((seq, message))
        seq += 1
    # Each message of the view the log holds by its number: the first unused equal one's.
    unused = [*known, *fresh]
    return fresh, segments(_number(message, unused) for message in view)


def _number(message: LlmMessage, unused: list[tuple[int, LlmMessage]]) -> int | LlmMessage:
    """The number of the first of ``unused`` equal to ``message`` (no longer unused then),
    or ``message`` itself when none is."""
    found = next((i for i, (_, m) in enumerate(unused) if m == message), None)
    return message if found is None else unused.pop(found)[0]
