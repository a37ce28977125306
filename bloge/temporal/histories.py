"""A run over several workflow histories: what lets an agent workflow continue as new.

:class:`Turns` observes the workflow's engine: at the start of each turn after a history's
first it asks :func:`due` whether the history should end (Temporal suggests it, or it
reached ``continue_as_new_events`` or ``continue_as_new_bytes``) and if so stops the engine
with :class:`ContinueAsNewDue`; :func:`continue_as_new` then carries the run's state to the
next history. A recorded run's state goes by reference to its thread's log, which
:class:`ThreadLog` keeps track of (the workflow numbers the run's messages, its activities
write them); another run's goes by value. :meth:`Turns.bound` refuses any payload over
``max_payload_bytes``, naming the run. Everything here runs inside the workflow: it is
deterministic, and notifies nobody.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from bloge.agent import (
    AgentCheckpoint,
    AgentExecutionListener,
    AgentOutput,
    AgentStreamChunk,
    AgentUsage,
)
from bloge.agent.runtime import ToolOutcome
from bloge.core.codec import DEFAULT_CODEC
from bloge.llm.messages import LlmMessage
from bloge.llm.types import LlmResponse
from bloge.store.recording import segments
from bloge.temporal import wire
from bloge.temporal.catalogue import ServedAgent
from bloge.temporal.options import MAX_PAYLOAD_BYTES, RunLimits
from bloge.temporal.patches import current_memo
from bloge.temporal.wire import Json

READ_ACTIVITY = "bloge.read"
APPEND_ACTIVITY = "bloge.append"
LOG_END_ACTIVITY = "bloge.log_end"
#: The error type of a run that would hand Temporal a payload over ``max_payload_bytes``.
PAYLOAD_TOO_LARGE = "PayloadTooLarge"

Keep = Callable[[int, list[Any], AgentUsage], Awaitable[None]]
"""``await keep(turns, view, usage)``: write a recorded run's new messages and its progress
to the store before it continues as new."""


class ContinueAsNewDue(Exception):  # noqa: N818 -- not an error: the run goes on anew
    """Raised at the start of turn ``turn`` to stop the engine there and continue as new."""

    def __init__(self, turn: int) -> None:
        super().__init__(f"continue as new at turn {turn}")
        self.turn = turn


class ThreadLog:
    """A recorded run's knowledge of its thread's log: the number of each message of the run
    the log holds (or will: the workflow numbers the run's new messages, which its
    activities write, ``unwritten`` until one did); ``messages`` are those it read."""

    __slots__ = ("_done", "_earlier", "_inline", "_known", "_matched", "_seq", "messages",
                 "next_seq", "unwritten")

    def __init__(self, next_seq: int, pairs: Sequence[Sequence[Any]], *,
                 transcript: Sequence[Any] | None = None) -> None:
        self.next_seq = next_seq
        self.messages = tuple(LlmMessage.from_dict(data, strict=False) for _, data in pairs)
        self.unwritten: list[tuple[int, LlmMessage]] = []
        # By identity: the engine's memory and transcript hold these very objects.
        self._seq: dict[int, int] = {}
        self._inline: set[int] = set()
        for (seq, _), message in zip(pairs, self.messages, strict=True):
            if seq is None:
                self._inline.add(id(message))
            else:
                self._seq[id(message)] = int(seq)
        # A checkpoint given by value: its messages the log holds are found by equality.
        self._known = [(int(seq), message) for (seq, _), message
                       in zip(pairs, self.messages, strict=True) if seq is not None]
        self._matched = 0
        self._done = 0
        # The transcript of the histories before this one, by reference; this history's
        # own starts with the view it continued with.
        self._earlier: list[Any] = list(transcript or ())

    def number(self, transcript: Sequence[LlmMessage], *, by_value: bool = False) -> None:
        """Number the messages ``transcript`` gained since the last call."""
        for message in transcript[self._done:]:
            key = id(message)
            if key in self._seq or key in self._inline:
                continue
            known = self._known
            if by_value and self._matched < len(known) and message == known[self._matched][1]:
                self._seq[key] = known[self._matched][0]
                self._matched += 1
                continue
            self._seq[key] = self.next_seq
            self.unwritten.append((self.next_seq, message))
            self.next_seq += 1
        self._done = len(transcript)

    def written(self, count: int) -> None:
        """The first ``count`` unwritten messages are in the log."""
        del self.unwritten[:count]

    def holds(self, message: LlmMessage) -> bool:
        """Whether ``message`` (this very object) is numbered in the log."""
        return id(message) in self._seq


    def refer(self, messages: Sequence[LlmMessage], parts: list[Any] | None = None) -> list[Any]:
        """``messages`` by reference (see :data:`bloge.temporal.wire.View`), after ``parts``
        (a view by reference too)."""
        earlier = wire.view_from_json(parts) if parts else ()
        return wire.view_to_json(segments(
            [*earlier, *(self._seq.get(id(message), message) for message in messages)]))

    def transcript(self, transcript: Sequence[LlmMessage]) -> list[Any]:
        """The run's whole transcript by reference: the earlier histories', then this one's
        after the view it continued with."""
        skip = len(self.messages) if self._earlier else 0
        return self.refer(transcript[skip:], self._earlier)


class GuestLog:
    """A guest run's part of its caller's thread's log: a sub-agent's child workflow on its
    caller's thread (see :mod:`bloge.agent.caller_thread`), under the hold of run
    ``holder``. The store numbers its messages as its activities write them (see
    :meth:`bloge.temporal.recording.StoreRecording.append_guest`): the child workflows of
    one thread run on any worker, several at once, and share no counter the workflow could
    number from. So the workflow keeps only which messages of its transcript it wrote
    (``written``, how many: a retried write gives those back), and writes none the log
    holds already — the caller's, that a ``context = "parent"`` child starts from
    (``known``). Its model calls carry their view by value, its end leaves the thread's view
    as it is, and it does not continue as new."""

    __slots__ = ("_done", "_known", "holder", "written")

    def __init__(self, holder: str, known: Sequence[LlmMessage] = ()) -> None:
        self.holder = holder
        self.written = 0
        self._done = 0
        # By identity: the engine's transcript holds these very objects.
        self._known: dict[int, LlmMessage] = {id(message): message for message in known}

    def unwritten(self, transcript: Sequence[LlmMessage]) -> list[LlmMessage]:
        """The messages ``transcript`` gained since the last write, those the log holds
        left out."""
        return [message for message in transcript[self._done:]
                if id(message) not in self._known]

    def append(self, transcript: Sequence[LlmMessage]) -> Json:
        """What an activity needs to write ``transcript``'s new messages: the holder, how
        many the run wrote before, and the messages."""
        return {"holder": self.holder, "first": self.written,
                "messages": wire.messages_to_json(self.unwritten(transcript))}

    def wrote(self, transcript: Sequence[LlmMessage]) -> None:
        """An activity wrote ``transcript``'s new messages (:meth:`append`)."""
        fresh = self.unwritten(transcript)
        self._known.update((id(message), message) for message in fresh)
        self.written += len(fresh)
        self._done = len(transcript)

    def holds(self, message: LlmMessage) -> bool:
        """Whether ``message`` (this very object) is in the thread's log."""
        return id(message) in self._known


class Turns:
    """The workflow's observer of its engine: before each model call, numbers a recorded
    run's new messages and refers to the view; at the start of a turn after the history's
    first, stops the run to continue as new when its history is due (``limits``; ``None``:
    never, a workflow begun before runs could); keeps what the model saw and answered last
    (:meth:`conversation`). It notifies nobody (replayed code may not)."""

    listener = AgentExecutionListener()

    def __init__(self, run_id: str, thread_id: str | None, first_turn: int,
                 limits: RunLimits | None, log: ThreadLog | None, carried: Json | None) -> None:
        self.run_id = run_id
        self.thread_id = thread_id or ""
        self.first_turn = first_turn
        self.limits = limits
        self.max_bytes = limits.max_payload_bytes if limits else MAX_PAYLOAD_BYTES
        self.log = log
        self.carried = carried
        self.continued = 0 if carried is None else int(carried.get("continued", 0))
        self.transcript: Sequence[LlmMessage] = ()
        # The transcript with the model's last answer (what a child on the run's thread
        # follows in its log).
        self.answered: Sequence[LlmMessage] = ()
        self.view: list[Any] | None = None
        self.by_value = False
        # A guest on its caller's thread (see GuestLog): it does not continue as new.
        self.guest = False
        self.skip = 0 if carried is None else len(carried["view"]) if log is None else 0
        self.earlier = (() if carried is None or log is not None
                        else wire.messages_from_json(carried["transcript"]))
        # The turn whose model call was made last in this history, the view it was shown,
        # and its answer (None until it answered).
        self._asked: tuple[int, Sequence[LlmMessage], LlmMessage | None] | None = None

    def chunk(self, chunk: AgentStreamChunk) -> None:
        pass

    async def before_model_call(self, turn: int, view: Sequence[LlmMessage],
                                transcript: Sequence[LlmMessage], usage: AgentUsage) -> None:
        self.transcript = transcript
        self._asked = (turn, view, None)
        if (self.limits is not None and not self.guest and turn > self.first_turn
                and due(self.limits)):
            raise ContinueAsNewDue(turn)
        if self.log is not None:
            self.log.number(transcript, by_value=self.by_value)
            self.view = self.log.refer(view)

    async def model_answered(self, turn: int, transcript: Sequence[LlmMessage],
                             response: LlmResponse, usage: AgentUsage) -> None:
        self.answered = transcript
        if self._asked is not None and self._asked[0] == turn:
            self._asked = (turn, self._asked[1], transcript[-1])

    def conversation(self, turn: int) -> tuple[LlmMessage, ...] | None:
        """The conversation as the model saw it when it asked for turn ``turn``'s calls: the
        view it was shown, then its answer (``None``: this history made no model call for
        that turn). Workflow state, so the same on every replay."""
        if self._asked is None or self._asked[0] != turn or self._asked[2] is None:
            return None
        return (*self._asked[1], self._asked[2])

    def cut_short(self, checkpoint: AgentCheckpoint) -> bool:
        """Whether ``checkpoint``, the engine's at the run's end, leaves out a tool round
        that never got its results (the run stopped while its tools ran): the model asked
        for calls in its turn, and it is the view the model was shown then. Its turn was
        not done: a resume asks the model it again (the engine counts it all the same)."""
        asked = self._asked
        return (asked is not None and asked[0] == checkpoint.turn_count
                and asked[2] is not None and bool(asked[2].tool_calls)
                and tuple(checkpoint.conversation) == tuple(asked[1]))

    def calls_waiting(self, turn: int, calls: Sequence[Any]) -> None:
        pass

    async def tool_completed(self, turn: int, outcome: ToolOutcome, *, running: int) -> None:
        pass

    async def handed_off(self, handoff: Any) -> None:
        """Nothing to do here: the workflow's effects tell the handoff from an activity
        (see ``ActivityEffects.handed_to``)."""

    async def finished(self, exit_reason: str, *, transcript: Sequence[LlmMessage],
                       view: Sequence[LlmMessage], usage: AgentUsage, turns: int,
                       output: AgentOutput | None, error: BaseException | None) -> None:
        self.transcript = transcript

    def whole(self, transcript: Sequence[LlmMessage]) -> tuple[LlmMessage, ...]:
        """A run kept by value: its whole transcript, the earlier histories' first."""
        return (*self.earlier, *transcript[self.skip:])

    def bound(self, payload: Any, what: str) -> RawValue:
        """``payload`` as Temporal is handed it (:func:`~bloge.temporal.wire.encoded`); the run
        fails, naming it, rather than hand Temporal a payload over the limit."""
        data = wire.encoded(payload)
        size = len(data.payload.data)
        if size > self.max_bytes:
            remedy = ("a message that large cannot cross Temporal" if self.log is not None
                      else "a sub-agent on its caller's thread (thread = \"parent\") sends "
                      "its view by value: give it the fresh context, or a thread of its own"
                      if self.guest
                      else "keep the runs in a run store (bloge.store), so that the memory "
                      "view goes by reference to the thread")
            raise ApplicationError(
                f"run {self.run_id!r}: {what} would be {size:,} bytes, over the "
                f"{self.max_bytes:,} of bloge.temporal.max-payload-bytes (Temporal refuses a "
                f"payload over 2 MiB); {remedy}", type=PAYLOAD_TOO_LARGE, non_retryable=True)
        return data

    def result(self, output: AgentOutput, report: Json) -> RawValue:
        """The workflow's result, encoded once (see :meth:`bound`): the output, then
        ``report``; a recorded run's messages and view by reference when it continued as new
        or they would pass the payload limit."""
        if self.log is None:
            if self.carried is not None:
                output = replace(output, messages=self.whole(output.messages))
            return self.bound({**wire.output_to_json(output), **report}, "its output")
        data = {**wire.output_to_json(output), **report}
        encoded = wire.encoded(data)
        if self.carried is None and len(encoded.payload.data) <= self.max_bytes:
            return encoded
        self.log.number(output.messages)
        data["messages"] = []
        data["checkpoint"]["conversation"] = []
        data["stored"] = {"transcript": self.log.transcript(output.messages),
                          "view": self.log.refer(output.checkpoint.conversation)}
        return self.bound(data, "its output")

    def checkpoint_details(self, checkpoint: AgentCheckpoint) -> tuple[Json, Json | None]:
        """A failed run's checkpoint, for its error's details: by value, or, when that would
        pass the payload limit, without its view (by reference, for a recorded run)."""
        data = DEFAULT_CODEC.decode(checkpoint.to_json())
        if wire.size(data) <= self.max_bytes // 2:
            return data, None
        data["conversation"] = []
        stored = None
        if self.log is not None:
            self.log.number(self.transcript)
            stored = {"thread_id": self.thread_id,
                      "view": self.log.refer(checkpoint.conversation)}
        return data, stored


def due(limits: RunLimits) -> bool:
    """Whether the workflow's history should end: Temporal says so, or it reached ``limits``."""
    info = workflow.info()
    return (info.is_continue_as_new_suggested()
            or 0 < limits.continue_as_new_events <= info.get_current_history_length()
            or 0 < limits.continue_as_new_bytes <= info.get_current_history_size())


async def continue_as_new(start: Json, turns: Turns, checkpoint: AgentCheckpoint,
                          keep: Keep, started: float, turns_done: int) -> NoReturn:
    """Go on from ``checkpoint`` in a new history of the same workflow: a recorded run keeps
    its messages and progress in the store and carries them by reference; another carries
    its view and transcript (within the payload limit)."""
    carried: Json = {
        "started": started, "thread_id": turns.thread_id or None, "turn_count": turns_done,
        "usage": checkpoint.usage.to_dict(), "continued": turns.continued + 1,
        "agent_id": checkpoint.agent_id,  # the agent it goes on with (it may have handed over)
        "tool_results": DEFAULT_CODEC.decode(DEFAULT_CODEC.encode_lenient(
            dict(checkpoint.tool_results))),
    }
    log = turns.log
    if log is not None:
        log.number(turns.transcript)
        view = log.refer(checkpoint.conversation)
        await keep(turns_done, view, checkpoint.usage)
        carried |= {"next_seq": log.next_seq, "view": view,
                    "transcript": log.transcript(turns.transcript)}
    else:
        carried |= {"view": wire.messages_to_json(checkpoint.conversation),
                    "transcript": wire.messages_to_json(turns.whole(turns.transcript))}
    turns.bound(carried, "the state it continues as new with")
    workflow.continue_as_new({**start, "input": None, "history": None, "checkpoint": None,
                              "carried": carried}, memo=current_memo())


async def read_view(agent: ServedAgent, run_id: str, thread_id: str | None,
                view: Sequence[Any]) -> list[list[Any]]:
    """The messages of a view by reference, read from the thread's log in pages of half the
    payload limit: ``[seq, message]`` pairs (``seq`` ``None`` for one held inline)."""
    pairs: list[list[Any]] = []
    rest = list(view)
    page = agent.plan.limits.max_payload_bytes // 2
    while rest:
        read = await workflow.execute_activity(READ_ACTIVITY, {
            "agent": agent.definition.id, "run_id": run_id, "thread_id": thread_id,
            "view": rest, "max_bytes": page}, **agent.plan.finish)
        pairs.extend(read["messages"])
        rest = read["rest"]
    return pairs


def numbered_pairs(messages: Sequence[tuple[int, LlmMessage]]) -> list[list[Any]]:
    return [[seq, message.to_dict()] for seq, message in messages]

