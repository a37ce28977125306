"""A run's events and what they stand for: listener callbacks and stream chunks as event
bodies, and the chunks back from the events (sans I/O; the recorders, the Temporal
activities and the relays all go through here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentStreamChunk,
    Token,
    ToolEnd,
    ToolStart,
)
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
    return None


def end_event(exit_reason: str, output: Mapping[str, Any] | None,
              failure: Mapping[str, str] | None) -> tuple[str, dict[str, Any]]:
    """The run's last event (type, body): ``done`` with its output's document, else
    ``error`` with its failure's type and message and its exit reason."""
    if output is not None:
        return "done", dict(output)
    return "error", {"error_type": failure and failure["type"],
                     "error_message": failure and failure["message"],
                     "exit_reason": exit_reason}


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
    return None


class CallbackEvents(AgentExecutionListener):
    """Every listener callback as one event: its name, and a body of the context's
    ``operator_ref`` and the payload's fields, handed to :meth:`keep`."""

    __slots__ = ()

    def keep(self, kind: str, body: Mapping[str, Any]) -> None:
        """Keep the event ``kind`` with ``body``."""
        raise NotImplementedError

    def _callback(self, kind: str, context: AgentCallbackContext, payload: object) -> None:
        self.keep(kind, {"operator_ref": context.operator_ref, **_fields(payload)})

    def on_agent_turn_started(self, context: AgentCallbackContext, payload: Any) -> None:
        self._callback("on_agent_turn_started", context, payload)

    def on_agent_llm_called(self, context: AgentCallbackContext, payload: Any) -> None:
        self._callback("on_agent_llm_called", context, payload)

    def on_agent_tool_dispatched(self, context: AgentCallbackContext, payload: Any) -> None:
        self._callback("on_agent_tool_dispatched", context, payload)

    def on_agent_tool_completed(self, context: AgentCallbackContext, payload: Any) -> None:
        self._callback("on_agent_tool_completed", context, payload)

    def on_agent_loop_exited(self, context: AgentCallbackContext, payload: Any) -> None:
        self._callback("on_agent_loop_exited", context, payload)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(payload: object) -> dict[str, Any]:
    names = _FIELDS.get(type(payload))
    if names is None:
        names = _FIELDS[type(payload)] = tuple(
            f.name for f in dataclasses.fields(payload))  # type: ignore[arg-type]  # payloads are dataclasses
    return {name: getattr(payload, name) for name in names}
