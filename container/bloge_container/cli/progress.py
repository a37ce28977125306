"""Progress while an agent works: a status line for whole answers, live chunks for streams."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bloge import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentStreamChunk,
    Done,
    Handoff,
    LlmCalledPayload,
    Partial,
    SubAgentChunk,
    Token,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    ToolEnd,
    ToolStart,
    TurnStartedPayload,
)
from bloge.llm.providers.retry import RetryNotice, observing_retries

if TYPE_CHECKING:  # rich's spinner (and its tables) loads when a terminal shows it
    from rich.console import Console
    from rich.status import Status


class ProgressListener(AgentExecutionListener):
    """Keeps a status line saying what the agent is doing (only on a terminal): while a
    provider call waits to be retried, how long and why."""

    def __init__(self) -> None:
        self._status: Status | None = None
        self._running: dict[str, str] = {}
        self._turn = 0

    @contextlib.contextmanager
    def showing(self, console: Console, *, enabled: bool = True) -> Iterator[None]:
        if not (enabled and console.is_terminal):
            yield
            return
        with console.status("Starting…") as status, observing_retries(self.on_retry):
            self._status = status
            try:
                yield
            finally:
                self._status = None

    def on_retry(self, notice: RetryNotice) -> None:
        """A model call failed and waits ``notice.wait`` seconds before its next attempt."""
        turn = f"Turn {self._turn}: " if self._turn else ""
        self._say(f"{turn}{retry_text(notice)}…")

    def _say(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)

    def on_agent_turn_started(self, context: AgentCallbackContext,
                              payload: TurnStartedPayload) -> None:
        self._turn = payload.turn_number
        self._say(f"Turn {payload.turn_number}: asking the model…")

    def on_agent_llm_called(self, context: AgentCallbackContext,
                            payload: LlmCalledPayload) -> None:
        self._say(f"Turn {payload.turn_number}: the model answered in "
                  f"{payload.latency_ms:.0f} ms")

    def on_agent_tool_dispatched(self, context: AgentCallbackContext,
                                 payload: ToolDispatchedPayload) -> None:
        self._running[payload.tool_call_id] = payload.tool_name
        self._say(f"Running {', '.join(self._running.values())}…")

    def on_agent_tool_completed(self, context: AgentCallbackContext,
                                payload: ToolCompletedPayload) -> None:
        self._running.pop(payload.tool_call_id, None)
        if self._running:
            self._say(f"Running {', '.join(self._running.values())}…")


def retry_text(notice: RetryNotice) -> str:
    """``retrying in 2 s: HTTP 429 (attempt 2 of 4)``."""
    return (f"retrying in {round(notice.wait, 1):g} s: {notice.reason} "
            f"(attempt {notice.attempt + 1} of {notice.max_attempts})")


class StreamPrinter:
    """Prints a stream: the model's tokens to ``answer`` as they come (each turn's text from
    a new line), a line per tool start and end to ``activity``; with ``as_json``, every chunk
    as one JSON line to ``answer``."""

    def __init__(self, answer: Console, activity: Console, *, as_json: bool) -> None:
        self._answer = answer
        self._activity = activity
        self._as_json = as_json
        self._mid_line = False
        self._turn = 0

    def show(self, chunk: AgentStreamChunk) -> None:
        if self._as_json:
            self._answer.print(json.dumps(_chunk_json(chunk), ensure_ascii=False), markup=False)
            return
        match chunk:
            case Token(text=text, turn_number=turn):
                if turn != self._turn:
                    self.finish()
                    self._turn = turn
                self._answer.print(text, end="", markup=False)
                self._mid_line = not text.endswith("\n")
            case ToolStart(tool_name=name, tool_call_id=call_id):
                self._line(f"→ {name} ({call_id})")
            case ToolEnd(tool_name=name, success=success):
                self._line(f"{'✓' if success else '✗'} {name}{'' if success else ' failed'}")
            case SubAgentChunk():  # a sub-agent's steps, on the activity lines only
                self._sub_agent(chunk)
            case Handoff(from_agent=handing, to_agent=taking):
                self._line(f"⇢ {handing} hands over to {taking}")
            case Done():
                self.finish()

    def _sub_agent(self, chunk: SubAgentChunk) -> None:
        """One line per tool call of a sub-agent, under its caller's call (``↳`` per level);
        its answer's tokens are the call's result, not the run's answer."""
        depth, inner = 1, chunk.chunk
        while isinstance(inner, SubAgentChunk):
            depth, inner = depth + 1, inner.chunk
        indent = "  " * depth + "↳ "
        match inner:
            case ToolStart(tool_name=name, tool_call_id=call_id):
                self._line(f"{indent}{chunk.tool_name}: → {name} ({call_id})")
            case ToolEnd(tool_name=name, success=success):
                self._line(f"{indent}{chunk.tool_name}: {'✓' if success else '✗'} {name}"
                           f"{'' if success else ' failed'}")

    def retrying(self, notice: RetryNotice) -> None:
        """A model call waits to be retried: a line on ``activity`` (none with ``as_json``)."""
        if not self._as_json:
            self._line(f"… {retry_text(notice)}")

    def _line(self, text: str) -> None:
        if self._answer.is_terminal:  # both share the screen: the tool line gets its own line
            self.finish()
        self._activity.print(text, markup=False, style="dim")

    def finish(self) -> None:
        """End the answer's current line, if a token left it open."""
        if self._mid_line:
            self._answer.print()
            self._mid_line = False


def _chunk_json(chunk: AgentStreamChunk) -> dict[str, Any]:
    match chunk:
        case Token(text=text, turn_number=turn):
            return {"type": "token", "text": text, "turn": turn}
        case ToolStart(tool_name=name, tool_call_id=call_id, turn_number=turn):
            return {"type": "tool_start", "tool": name, "call_id": call_id, "turn": turn}
        case ToolEnd(tool_name=name, tool_call_id=call_id, success=success, turn_number=turn):
            return {"type": "tool_end", "tool": name, "call_id": call_id, "success": success,
                    "turn": turn}
        case Partial(value=value, turn_number=turn):
            return {"type": "partial", "value": value, "turn": turn}
        case SubAgentChunk(tool_name=name, tool_call_id=call_id, run_id=run_id, chunk=inner):
            return {"type": "subagent", "tool": name, "call_id": call_id, "run_id": run_id,
                    "chunk": _chunk_json(inner)}
        case Handoff(from_agent=handing, to_agent=taking, reason=reason, turn_number=turn):
            return {"type": "handoff", "from_agent": handing, "to_agent": taking,
                    "reason": reason, "turn": turn}
        case Done(final_output=output):
            done = {"type": "done", "run_id": output.run_id, "thread_id": output.thread_id,
                    "content": output.content,
                    "finish_reason": output.finish_reason, "exit_reason": output.exit_reason,
                    "turns_used": output.turns_used, "usage": output.usage.to_dict()}
            if output.output_data is not None:
                done["output"] = output.output_data
            return done
