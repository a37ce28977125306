"""``AgentStreamChunk``: what a streaming agent emits, in order, ``Done`` last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from bloge.agent.loop.records import AgentOutput


@dataclass(frozen=True, slots=True)
class Token:
    """One token (or token group) from the model."""

    text: str
    turn_number: int


@dataclass(frozen=True, slots=True)
class ToolStart:
    """Just before a tool is dispatched."""

    tool_name: str
    tool_call_id: str
    turn_number: int


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """Right after a tool completed; ``success`` is false when it failed or was refused."""

    tool_name: str
    tool_call_id: str
    success: bool
    turn_number: int


@dataclass(frozen=True, slots=True)
class Partial:
    """A typed agent's answer so far: the fields parsed from the text streamed in this turn
    (a JSON object cut where the stream is; the last field may be incomplete). The final,
    validated value is ``Done.final_output.output``."""

    value: Any
    turn_number: int


@dataclass(frozen=True, slots=True)
class Handoff:
    """The run goes on with another agent: the model of ``from_agent`` handed the
    conversation to ``to_agent`` in turn ``turn_number``, for ``reason`` (may be empty)."""

    from_agent: str
    to_agent: str
    reason: str
    turn_number: int


@dataclass(frozen=True, slots=True)
class Done:
    """The last chunk: the loop has exited with ``final_output``."""

    final_output: AgentOutput


AgentStreamChunk: TypeAlias = Token | ToolStart | ToolEnd | Partial | Handoff | Done
