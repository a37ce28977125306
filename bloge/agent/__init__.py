"""The agent extension: definitions, their DSL compiler and builder, and the runtime.

These are the names users run agents with; the packages that plug into the loop (a run store,
a durable runner, a server) build on :mod:`bloge.agent.runtime`.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.agent.builder": ["AgentBuilder"],
        "bloge.agent.compiler": ["AgentDslCompiler"],
        "bloge.agent.definition": ["AgentDef", "AgentToolRef"],
        "bloge.agent.extension": ["AgentExtensionProvider"],
        "bloge.agent.facade": ["Agent", "ChatModel", "Tool", "ToolUse"],
        "bloge.agent.listeners": [
            "AgentCallbackContext", "AgentExecutionListener", "LlmCalledPayload",
            "LoopExitedPayload", "ToolCompletedPayload", "ToolDispatchedPayload",
            "TurnStartedPayload",
        ],
        "bloge.agent.loop": [
            "AgentCheckpoint", "AgentInput", "AgentLoopOperator", "AgentOutput", "AgentRunError",
            "AgentStreamChunk", "AgentUsage", "Done", "MaxTurnsExceededError",
            "StreamingAgentLoopOperator", "Token", "ToolEnd", "ToolStart",
        ],
        "bloge.agent.materialize": ["agent_operator"],
        "bloge.agent.memory": [
            "AgentMemoryStrategy", "ConversationMemory", "LlmSummarizer", "MemoryStrategy",
        ],
        "bloge.llm.types": ["ToolDefinition"],
    })

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
