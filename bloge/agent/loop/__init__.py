"""The agent runtime: the ReAct loop, its records, streaming and checkpoints."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.loop.checkpoint import AgentCheckpoint
    from bloge.agent.loop.chunks import AgentStreamChunk, Done, Token, ToolEnd, ToolStart
    from bloge.agent.loop.errors import AgentRunError, MaxTurnsExceededError
    from bloge.agent.loop.operator import AgentLoopOperator
    from bloge.agent.loop.records import AgentInput, AgentOutput, AgentUsage
    from bloge.agent.loop.streaming import StreamingAgentLoopOperator
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.agent.loop.checkpoint": ["AgentCheckpoint"],
        "bloge.agent.loop.chunks": ["AgentStreamChunk", "Done", "Token", "ToolEnd", "ToolStart"],
        "bloge.agent.loop.errors": ["AgentRunError", "MaxTurnsExceededError"],
        "bloge.agent.loop.operator": ["AgentLoopOperator"],
        "bloge.agent.loop.records": ["AgentInput", "AgentOutput", "AgentUsage"],
        "bloge.agent.loop.streaming": ["StreamingAgentLoopOperator"],
    })

__all__ = [
    "AgentCheckpoint",
    "AgentInput",
    "AgentLoopOperator",
    "AgentOutput",
    "AgentRunError",
    "AgentStreamChunk",
    "AgentUsage",
    "Done",
    "MaxTurnsExceededError",
    "StreamingAgentLoopOperator",
    "Token",
    "ToolEnd",
    "ToolStart",
]
