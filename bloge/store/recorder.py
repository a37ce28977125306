"""``Recorder``: one run's observer, writing what the loop does into the store.

It turns the loop's hooks into batches of :mod:`bloge.store.ops`, written at the points where
a run's state must survive a crash — before each model call (the last turn complete, its
checkpoint), after a model answer that asks for tools (the calls in the ledger before any
runs), after each tool call while others still run, and at the end. Listener callbacks and
stream chunks become the run's numbered events, written with the next batch. The store's
leases (:mod:`bloge.store.leases`) renew the run's lease, which stops the run when someone
asked to cancel it.

A batch the store could not write is not dropped: its messages have their numbers already,
and what follows refers to them, so it is written first with the next batch (each batch is
one transaction: whatever the store holds refers only to messages it holds). The run's end is
tried again after :data:`END_WRITE_PAUSES`; when it cannot be written either, the run stays
as its last written batch left it, and is interrupted once its lease ends.

Events are shown to live watchers before they are stored (a stream is not held up by the
store), at most :data:`SHOWN_AHEAD` of them: a run resumed after a crash numbers its events
from that far above the last stored one, so that no number a client was shown ever names
another event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bloge.agent import (
    AgentOutput,
    AgentStreamChunk,
    AgentUsage,
    GuardrailTrippedError,
    HandoffPayload,
)
from bloge.agent.runtime import PendingCall, RunPaused, ToolOutcome
from bloge.core.errors import ProviderError
from bloge.llm import LlmMessage, LlmResponse
from bloge.store import ops, traced
from bloge.store.errors import StoreError
from bloge.store.events import callback_events, chunk_event, end_event
from bloge.store.owner import this_worker
from bloge.store.paused import await_calls, pause_ops
from bloge.store.records import RunEvent, RunStatus, Segment, StoredMessage, segments
from bloge.store.store import Store
from bloge.store.thread_log import ThreadLog
from bloge.store.writer import RunWriter

#: How old the events kept for the next batch may grow while a run streams, in seconds.
EVENT_FLUSH_SECONDS = 0.25

#: How long to wait before each new attempt to write a run's end, in seconds (a database
#: restarting, a lock held a moment too long).
END_WRITE_PAUSES = (0.25, 1.0)

#: How many events a run may show to its watchers before they are stored; a resumed run
#: numbers its events from this far above the last one its store holds.
SHOWN_AHEAD = 1000


class Recorder:
    """The :class:`~bloge.agent.loop.observer.RunObserver` of one run of ``store``, written
    by ``writer``; its events are redacted by the store's redactor and shown to the store's
    live watchers.

    ``log`` is the thread's log the run writes to, which numbers its messages (shared with
    the sub-agents' runs on the same thread, see :mod:`bloge.store.thread_log`); :meth:`know`
    tells it the messages of the log the run starts from. A run that does not hold its
    thread (a sub-agent's on its caller's) never moves the thread's memory view.
    ``events_stored`` is the number of the last event the store holds of a run being resumed
    (``None``: a new run, numbered from 1); the resumed run's events are numbered from
    :data:`SHOWN_AHEAD` above it, and shown only once the first of them is stored.
    """

    __slots__ = ("_events", "_flushed_at", "_held", "_next_event", "_ops", "_persisted",
                 "_stored_event", "_unanswered", "cancel_requested", "ended",
                 "finished_writing", "listener", "log", "lost", "run_id", "spans", "store",
                 "thread_id", "writer")

    def __init__(self, store: Store, writer: RunWriter, *, run_id: str, log: ThreadLog,
                 events_stored: int | None = None) -> None:
        self.store = store
        self.writer = writer
        self.run_id = run_id
        self.log = log
        self.thread_id = log.thread_id
        # The last event stored (0: none, of a new run), and what is numbered next.
        self._stored_event = events_stored or 0
        self._next_event = 1 if events_stored is None else events_stored + SHOWN_AHEAD + 1
        self._held: list[RunEvent] = []  # numbered, not to be shown before more are stored
        self._persisted = 0
        #: Calls of the last tool round without a recorded outcome yet.
        self._unanswered = 0
        self._ops: list[ops.Op] = []
        self._events: list[RunEvent] = []
        self._flushed_at = time.monotonic()
        #: The run's callbacks, redacted as the journal's events, as its events.
        self.listener = callback_events(store.redactor, self.event)
        #: The run's spans, read off its events, when its store traces runs.
        self.spans: traced.Spans | None = None
        self.cancel_requested = False
        self.lost = False
        #: The run's end is among the writes: whoever else ends the run has nothing to add.
        self.ended = False
        self.finished_writing = False

    def keep(self, op: ops.Op) -> None:
        """Write ``op`` with the run's next batch."""
        self._ops.append(op)

    def know(self, messages: Any) -> None:
        """Messages of the thread's log the run works with: referred to, never rewritten."""
        for stored in messages:
            self.log.seq_of[id(stored.message)] = (stored.message, stored.seq)

    # -- events

    def event(self, kind: str, body: Mapping[str, Any], at: float | None = None) -> None:
        """Number and keep one event (of time ``at``, else now); it is written with the next
        batch, and watchers of the live run see it at once (see the module docs for when they
        see it later). Callbacks come redacted as the journal's events are
        (:attr:`listener`); stream chunks are kept exact (a re-joined stream shows what the
        first one showed)."""
        event = RunEvent(self.run_id, self._next_event, kind, time.time() if at is None else at,
                         body)
        self._next_event += 1
        self._events.append(event)
        if self.spans is not None:
            self.spans.event(kind, event.body, event.at)
        if self._held or event.seq > self._stored_event + SHOWN_AHEAD:
            self._held.append(event)
        else:
            self.store.live.publish(event)

    def chunk(self, chunk: AgentStreamChunk) -> None:
        kept = chunk_event(chunk)
        if kept is not None:  # a Done: the run's "done" event is written when it finishes
            self.event(*kept)

    # -- the loop's hooks

    async def before_model_call(self, turn: int, view: Sequence[LlmMessage],
                                transcript: Sequence[LlmMessage], usage: AgentUsage) -> None:
        now = time.time()
        self._append_new(transcript, now)
        self._ops.append(ops.SaveCheckpoint(self.run_id, turn - 1, self.segments(view),
                                            usage.to_dict(), now))
        if self.spans is not None:
            traced.model_call(self.spans, self.store.redactor, turn, view,
                              capture=self.store.tracing.capture_content)
        await self.flush()

    async def model_answered(self, turn: int, transcript: Sequence[LlmMessage],
                             response: LlmResponse, usage: AgentUsage) -> None:
        if self.spans is not None and self.store.tracing.capture_content:
            traced.answered(self.spans, self.store.redactor, response)
        if not response.tool_calls:
            return  # the run finishes next, and writes then
        now = time.time()
        self._append_new(transcript, now)
        _, message_seq = self.log.seq_of[id(transcript[-1])]
        calls = tuple((c.id, c.name, c.arguments) for c in response.tool_calls)
        self.round_started(len(calls))
        self._ops.append(ops.DispatchToolCalls(self.run_id, turn, message_seq, calls, now))
        # The run's usage so far, this call's included: a round resumed after a crash
        # continues from it (its checkpoint predates the call).
        self._ops.append(ops.UpdateRun(self.run_id, turn, usage.to_dict(), now))
        await self.flush()

    def round_started(self, calls: int) -> None:
        """A tool round of ``calls`` calls runs (or a resumed run continues one): until each
        completes, the run's end keeps the checkpoint before it."""
        self._unanswered = calls

    def calls_waiting(self, turn: int, calls: Sequence[PendingCall]) -> None:
        """Written with the model's answer (see :mod:`bloge.store.paused`)."""
        self._ops.append(await_calls(self.store, self.run_id, turn, calls))

    async def tool_completed(self, turn: int, outcome: ToolOutcome, *, running: int) -> None:
        self._unanswered -= 1
        self._ops.append(ops.CompleteToolCall(
            self.run_id, turn, outcome.call.id, outcome.success, outcome.content,
            isinstance(outcome.result, str), time.time()))
        if running:  # the last one is written with the turn, at once
            await self.flush()

    async def handed_off(self, handoff: HandoffPayload) -> None:
        """Written with the next turn's checkpoint, the first of the agent taking over: a
        resume from it continues with that agent, one from before with the round that
        hands over again."""
        self._ops.append(ops.HandOffRun(self.run_id, handoff.to_agent, time.time()))

    async def finished(self, exit_reason: str, *, transcript: Sequence[LlmMessage],
                       view: Sequence[LlmMessage] | None, usage: AgentUsage, turns: int,
                       output: AgentOutput | None, error: BaseException | None) -> None:
        """Record the run's end. ``view`` is the memory's, which the thread's next run starts
        from and a resume continues; ``None`` when the run stopped before its loop had one:
        the thread keeps the view it had, and a resume starts the run again from its input."""
        if not self.lost and not self.ended:
            self._end(exit_reason, transcript=transcript, view=view, usage=usage, turns=turns,
                      output=output, error=error)
        if self.spans is not None:
            traced.ended(self.spans, time.time(), usage.to_dict())
        if self.lost:
            return  # another worker holds the run now
        await self._write_end()
        self.finished_writing = True

    def _end(self, exit_reason: str, *, transcript: Sequence[LlmMessage],
             view: Sequence[LlmMessage] | None, usage: AgentUsage, turns: int,
             output: AgentOutput | None, error: BaseException | None) -> None:
        self.ended = True
        now = time.time()
        self._append_new(transcript, now)
        if isinstance(error, RunPaused):
            self._ops.extend(pause_ops(self, error, turns, usage.to_dict(), now))
            return
        segments = None if view is None else self.segments(view)
        status = RunStatus.ended(exit_reason, succeeded=output is not None)
        failure = None
        if error is not None:
            failure = self._failure(error)
        document = None if output is None else output.to_dict(messages=False, checkpoint=False)
        self.event(*end_event(exit_reason, document, failure, usage=usage.to_dict(),
                              error=error))
        if segments is not None and not self._unanswered:
            # A run stopped in the middle of a tool round keeps its last checkpoint: a resume
            # continues the round from the ledger instead of taking it for done.
            self._ops.append(ops.SaveCheckpoint(self.run_id, turns, segments, usage.to_dict(),
                                                now))
        # A run on another's hold leaves the thread's view to the holder.
        thread_view = segments if self.log.holder == self.run_id else None
        self._ops.append(ops.FinishRun(self.run_id, self.thread_id, status, exit_reason, turns,
                                       usage.to_dict(), document, failure, thread_view, now))

    async def _write_end(self) -> None:
        for pause in END_WRITE_PAUSES:
            try:
                await self.flush()
            except StoreError:
                await asyncio.sleep(pause)
            else:
                return
        await self.flush()

    def _failure(self, error: BaseException) -> dict[str, Any]:
        """How the run's failure is recorded: its type, message and, when a model's server
        refused a request, that request (all redacted)."""
        described = self.store.redactor(None, "", {"error_message": str(error)})
        failure: dict[str, Any] = {"type": type(error).__name__,
                                   "message": described["error_message"]}
        if isinstance(error, GuardrailTrippedError):  # which guard, and its verdict
            failure["guardrail"] = self.store.redactor(None, "", {"guardrail": error.details()})[
                "guardrail"]
        refused = refused_request(error)
        if refused is not None:
            failure["request"] = self.store.redactor(None, "", {"request": refused})["request"]
        return failure

    async def flush(self) -> None:
        """Write what was kept since the last batch, after what the store could not write
        before; a :class:`StoreError` keeps it all for the next attempt."""
        batch = self._ops
        if self._events:
            batch.append(ops.AppendEvents(tuple(self._events)))
            self._events = []
        self._ops = []
        self._flushed_at = time.monotonic()
        try:
            await self.writer.write(batch)
        except StoreError:
            # Not written (the transaction rolled back): first in the next batch.
            self._ops = [*batch, *self._ops]
            raise
        self._stored(batch)

    def _stored(self, batch: Sequence[ops.Op]) -> None:
        """``batch`` is in the store: the events held back that may be shown now are."""
        for op in batch:
            if isinstance(op, ops.AppendEvents) and op.events:
                self._stored_event = max(self._stored_event, op.events[-1].seq)
        self.store.live.stored(self.run_id, self._stored_event)
        limit = self._stored_event + SHOWN_AHEAD
        shown = 0
        for event in self._held:
            if event.seq > limit:
                break
            self.store.live.publish(event)
            shown += 1
        del self._held[:shown]

    async def flush_if_due(self) -> None:
        """Write the events kept so far when the last batch is older than
        :data:`EVENT_FLUSH_SECONDS`, so that a stream followed from another process (which
        reads the store) falls no further behind. The write waits one turn of the event
        loop: the watchers the last event woke send it first. Without it, the first token
        after a model's wait (more than that since the batch before the call) would reach
        its stream only after a transaction, which a SQLite store runs in the loop."""
        if self._events and time.monotonic() - self._flushed_at >= EVENT_FLUSH_SECONDS:
            await asyncio.sleep(0)
            await self.flush()

    # -- messages and views

    def _append_new(self, transcript: Sequence[LlmMessage], at: float) -> None:
        fresh: list[StoredMessage] = []
        seq_of = self.log.seq_of
        for message in transcript[self._persisted:]:
            if id(message) in seq_of:
                continue
            seq = self.log.take()
            seq_of[id(message)] = (message, seq)
            fresh.append(StoredMessage(self.thread_id, seq, message, self.run_id))
        self._persisted = len(transcript)
        if fresh:
            self._ops.append(ops.AppendMessages(self.thread_id, tuple(fresh), at))

    def segments(self, view: Sequence[LlmMessage]) -> tuple[Segment, ...]:
        """``view`` by reference (see :func:`~bloge.store.records.segments`): the messages
        the run knows by their numbers in the log, others (a summary) inline."""
        seq_of = self.log.seq_of
        return segments([message if (known := seq_of.get(id(message))) is None else known[1]
                         for message in view])

    # -- the lease

    def leased(self) -> _Lease:
        """Renew the run's lease while the ``async with`` block runs (with the store's other
        leases, see :mod:`bloge.store.leases`); cancel the block's task when someone asks the
        run to stop, or when the lease was lost to another worker."""
        return _Lease(self)


class _Lease:
    """A run's lease while a block runs (see :meth:`Recorder.leased`): an object rather than
    a generator and a closure, for a run keeps it as long as it runs."""

    __slots__ = ("_held", "_owner", "_recorder", "_running", "_watched")

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._owner: asyncio.Task[Any] | None = None
        self._running = False  # a renewal may end after the block did: it then stops nothing
        self._held = recorder.store.leases.held(recorder.run_id, self._renew)
        self._watched: contextlib.AbstractContextManager[None] | None = None

    async def __aenter__(self) -> None:
        self._owner = asyncio.current_task()
        self._running = True
        renew_now = self._held.__enter__()
        # The renewal reads whether the run was asked to stop: at once when it may have been.
        self._watched = self._recorder.store.cancels.watching(self._recorder.run_id, renew_now)
        self._watched.__enter__()

    async def __aexit__(self, *exc_info: object) -> None:
        self._running = False
        if self._watched is not None:
            self._watched.__exit__(None, None, None)
        self._held.__exit__(None, None, None)

    async def _renew(self) -> bool:
        recorder = self._recorder
        asked = await recorder.writer.renew_lease(run_id=recorder.run_id,
                                                  thread_id=recorder.thread_id,
                                                  worker=this_worker())
        if not self._running or asked is False:
            return self._running
        if asked is None:
            recorder.lost = True
        else:
            recorder.cancel_requested = True
        assert self._owner is not None
        self._owner.cancel()
        return False


def refused_request(error: BaseException) -> str | None:
    """The request a model's server refused, from the :class:`ProviderError` that ``error``
    is or was caused by; ``None`` when there is none."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ProviderError):
            return seen.request
        seen = seen.__cause__ or seen.__context__
    return None
