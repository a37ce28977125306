"""A run's events and what they stand for: listener callbacks — the journal's events, with
the run as their sink — and stream chunks as event bodies, and the chunks back from the
events (sans I/O; the recorders, the Temporal activities and the relays all go through
here)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bloge.agent import (
    AgentExecutionListener,
    AgentStreamChunk,
    BudgetExceededError,
    Handoff,
    SubAgentChunk,
    Token,
    ToolEnd,
    ToolStart,
)
from bloge.journal.redaction import Redactor
from bloge.store.records import RunEvent

if TYPE_CHECKING:
    from structlog.typing import EventDict, Processor, WrappedLogger


def chunk_event(chunk: AgentStreamChunk) -> tuple[str, dict[str, Any]] | None:
    """The event (type, body) that keeps ``chunk``; ``None`` for a ``Done``, whose event is
    the run's end."""
    match chunk:
        case Token(text, turn):
            return "token", {"text": text, "turn": turn}
        case ToolStart(name, call_id, turn):
            return "tool_start", {"tool": name, "call_id": call_id, "turn": turn}
        case ToolEnd(name, call_id, success, turn):
            return "tool_end", {"tool": name, "call_id": call_id, "success": success,
                                "turn": turn}
        case SubAgentChunk(name, call_id, run_id, inner):
            nested = chunk_event(inner)
            if nested is None:
                return None
            kind, body = nested
            return "subagent", {"tool": name, "call_id": call_id, "run_id": run_id,
                                "event": kind, "body": body}
        case Handoff(from_agent, to_agent, reason, turn):
            return "handoff", {"from_agent": from_agent, "to_agent": to_agent,
                               "reason": reason, "turn": turn}
    return None


def end_event(exit_reason: str, output: Mapping[str, Any] | None,
              failure: Mapping[str, Any] | None, *, usage: Mapping[str, Any] | None = None,
              error: BaseException | None = None) -> tuple[str, dict[str, Any]]:
    """The run's last event (type, body): ``done`` with its output's document, else
    ``error`` with its failure's type and message and its exit reason, and with ``usage``
    (what the run spent) and the budget it stopped at when ``error`` is a budget stop."""
    if output is not None:
        return "done", dict(output)
    body: dict[str, Any] = {"error_type": failure and failure["type"],
                            "error_message": failure and failure["message"],
                            "exit_reason": exit_reason}
    if usage is not None:
        body["usage"] = dict(usage)
    if isinstance(error, BudgetExceededError):
        body["budget"] = error.to_dict()
    return "error", body


def event_chunk(event: RunEvent) -> AgentStreamChunk | None:
    """The stream chunk ``event`` keeps, if it keeps one."""
    body = event.body
    match event.type:
        case "token":
            return Token(body["text"], body["turn"])
        case "tool_start":
            return ToolStart(body["tool"], body["call_id"], body["turn"])
        case "tool_end":
            return ToolEnd(body["tool"], body["call_id"], body["success"], body["turn"])
        case "handoff":
            return Handoff(body["from_agent"], body["to_agent"], body["reason"], body["turn"])
    return None


class RunEventSink:
    """The journal's sink when its destination is a run's events: each rendered callback is
    handed to ``keep`` (the run's recorder, which numbers it among the run's other events and
    writes it with its next batch), at once and in order."""

    __slots__ = ("keep", "renderer")

    def __init__(self, keep: Keep) -> None:
        self.keep = keep
        self.renderer: Processor = run_event

    def write(self, messages: Sequence[RunEventBody]) -> None:
        for kind, body, at in messages:
            self.keep(kind, body, at)

    def close(self) -> None:
        """Nothing to release: the run's recorder writes the events."""


#: A rendered callback: (callback, body, time).
RunEventBody = tuple[str, dict[str, Any], float]
#: Keeps one event of a run: (kind, body, time).
Keep = Callable[[str, Mapping[str, Any], float], None]
#: What a run's event says by its place: the run, its number, its kind and time, and the
#: graph and node (a recorded run is the one agent of its execution).
_THE_RUNS = frozenset({"event", "timestamp", "seq", "execution_id", "graph_name", "node_id"})


def run_event(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> RunEventBody:
    """The renderer of :class:`RunEventSink`: a journal event as the run keeps it — its
    callback, its body (the context's ``operator_ref`` and the payload's fields; the run
    numbers it) and its time."""
    body = {key: value for key, value in event_dict.items() if key not in _THE_RUNS}
    at = dt.datetime.fromisoformat(event_dict["timestamp"]).timestamp()
    return event_dict["event"], body, at


def callback_events(redactor: Redactor, keep: Keep) -> AgentExecutionListener:
    """The listener that records a run's callbacks: the journal's bridge, its chain with
    ``redactor`` (the store's), and ``keep`` as its sink — the run store's events are the
    journal's events, through the one chain. The journal, and structlog, load with the
    first recorded run."""
    from bloge.journal.bridge import AgentEventJournalBridge  # noqa: PLC0415 -- see above
    from bloge.journal.journal import EventJournal  # noqa: PLC0415 -- see above

    journal = EventJournal(RunEventSink(keep), redactor=redactor, max_batch=1)
    return AgentEventJournalBridge(journal, redactor=redactor)
