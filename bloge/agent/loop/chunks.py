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


@dataclass(frozen=True, slots=True)
class SubAgentChunk:
    """A chunk of a sub-agent's run (see :mod:`bloge.agent.subagent`), relayed under the
    caller's tool call ``tool_call_id`` of tool ``tool_name``; ``run_id`` is the sub-agent's
    recorded run (``None`` when it is not recorded). A sub-agent's own sub-agents nest
    further."""

    tool_name: str
    tool_call_id: str
    run_id: str | None
    chunk: Token | ToolStart | ToolEnd | Partial | Handoff | SubAgentChunk


AgentStreamChunk: TypeAlias = (Token | ToolStart | ToolEnd | Partial | Handoff | SubAgentChunk
                                 | Done)
