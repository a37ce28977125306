"""The agent runtime: the ReAct loop, its records, streaming and checkpoints."""

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import AgentStreamChunk, Done, Token, ToolEnd, ToolStart
from bloge.agent.loop.errors import AgentRunError, MaxTurnsExceededError
from bloge.agent.loop.operator import AgentLoopOperator
from bloge.agent.loop.records import AgentInput, AgentOutput, AgentUsage
from bloge.agent.loop.streaming import StreamingAgentLoopOperator

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
