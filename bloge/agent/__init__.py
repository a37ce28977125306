"""The agent extension: definitions, their DSL compiler and builder, and the runtime."""

from bloge.agent.builder import AgentBuilder
from bloge.agent.compiler import AgentDslCompiler
from bloge.agent.definition import AgentDef, AgentToolRef
from bloge.agent.extension import AgentExtensionProvider
from bloge.agent.facade import Agent, ChatModel, Tool, ToolUse
from bloge.agent.listeners import (
    AgentCallbackContext,
    AgentExecutionListener,
    LlmCalledPayload,
    LoopExitedPayload,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.agent.loop import (
    AgentCheckpoint,
    AgentInput,
    AgentLoopOperator,
    AgentOutput,
    AgentRunError,
    AgentStreamChunk,
    AgentUsage,
    Done,
    MaxTurnsExceededError,
    StreamingAgentLoopOperator,
    Token,
    ToolEnd,
    ToolStart,
)
from bloge.agent.materialize import agent_operator
from bloge.agent.memory import (
    AgentMemoryStrategy,
    ConversationMemory,
    LlmSummarizer,
    MemoryStrategy,
)
from bloge.llm.types import ToolDefinition

__all__ = [
    "Agent",
    "AgentBuilder",
    "AgentCallbackContext",
    "AgentCheckpoint",
    "AgentDef",
    "AgentDslCompiler",
    "AgentExecutionListener",
    "AgentExtensionProvider",
    "AgentInput",
    "AgentLoopOperator",
    "AgentMemoryStrategy",
    "AgentOutput",
    "AgentRunError",
    "AgentStreamChunk",
    "AgentToolRef",
    "AgentUsage",
    "ChatModel",
    "ConversationMemory",
    "Done",
    "LlmCalledPayload",
    "LlmSummarizer",
    "LoopExitedPayload",
    "MaxTurnsExceededError",
    "MemoryStrategy",
    "StreamingAgentLoopOperator",
    "Token",
    "Tool",
    "ToolCompletedPayload",
    "ToolDefinition",
    "ToolDispatchedPayload",
    "ToolEnd",
    "ToolStart",
    "ToolUse",
    "TurnStartedPayload",
    "agent_operator",
]
