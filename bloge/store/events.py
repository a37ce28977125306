"""A run's events and what they stand for: listener callbacks — the journal's events, as
the run keeps them — and stream chunks as event bodies, and the chunks back from the
events (sans I/O; the recorders, the Temporal activities and the relays all go through
here)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentStreamChunk,
    BudgetExceededError,
    Handoff,
    SubAgentChunk,
    Token,
    ToolEnd,
    ToolStart,
)
from bloge.journal.callbacks import CallbackListener, record_fields
from bloge.journal.redaction import Redactor
from bloge.store.records import RunEvent


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
    """The stream chunk ``event`` keeps, if it keeps one (a ``subagent`` event's is a
    :class:`~bloge.agent.SubAgentChunk`, nested as it was kept)."""
    return _chunk_of(event.type, event.body)


#: A chunk a run's events keep (a ``Done`` is its end event, a ``Partial`` is not kept).
_Kept: TypeAlias = Token | ToolStart | ToolEnd | Handoff | SubAgentChunk


def _chunk_of(kind: str, body: Mapping[str, Any]) -> _Kept | None:
    match kind:
        case "token":
            return Token(body["text"], body["turn"])
        case "tool_start":
            return ToolStart(body["tool"], body["call_id"], body["turn"])
        case "tool_end":
            return ToolEnd(body["tool"], body["call_id"], body["success"], body["turn"])
        case "handoff":
            return Handoff(body["from_agent"], body["to_agent"], body["reason"], body["turn"])
        case "subagent":
            inner = _chunk_of(body["event"], body["body"])
            if inner is None:
                return None
            return SubAgentChunk(body["tool"], body["call_id"], body["run_id"], inner)
    return None


class RunCallbacks(CallbackListener):
    """Records a run's callbacks as its events: each one's body holds the fields of the
    journal's event for it (:class:`~bloge.journal.AgentEventJournalBridge`) but those the
    run's event says by its place — the context's ``operator_ref``, then the payload's
    fields — redacted by ``redactor`` (the store's, a journal :class:`Redactor`); ``keep``
    (the run's recorder) numbers it among the run's other events, with the time it came,
    and writes it with its next batch."""

    __slots__ = ("keep", "redactor")

    def __init__(self, redactor: Redactor, keep: Keep) -> None:
        self.redactor = redactor
        self.keep = keep

    def record(self, callback: str, context: AgentCallbackContext, payload: object) -> None:
        body = record_fields({"operator_ref": context.operator_ref}, payload)
        self.keep(callback, self.redactor(None, callback, body), time.time())


#: Keeps one event of a run: (kind, body, time).
Keep = Callable[[str, Mapping[str, Any], float], None]


def callback_events(redactor: Redactor, keep: Keep) -> AgentExecutionListener:
    """The listener that records a run's callbacks (see :class:`RunCallbacks`): the run
    store's events are the journal's, redacted alike."""
    return RunCallbacks(redactor, keep)
