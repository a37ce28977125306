"""bloge for Python: declarative LLM agents.

The curated public surface. Everything here is stable API; modules not re-exported here
are internal and may change.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent import (
        Agent,
        AgentBuilder,
        AgentCallbackContext,
        AgentCheckpoint,
        AgentDef,
        AgentDslCompiler,
        AgentExecutionListener,
        AgentInput,
        AgentLoopOperator,
        AgentMemoryStrategy,
        AgentOutput,
        AgentRunError,
        AgentStreamChunk,
        AgentToolRef,
        AgentUsage,
        ConversationMemory,
        Done,
        LlmCalledPayload,
        LoopExitedPayload,
        MaxTurnsExceededError,
        StreamingAgentLoopOperator,
        Token,
        Tool,
        ToolCompletedPayload,
        ToolDispatchedPayload,
        ToolEnd,
        ToolStart,
        TurnStartedPayload,
        agent_operator,
    )
    from bloge.core import (
        BlogeError,
        BlogeUsageError,
        CompileError,
        DslError,
        DslSyntaxError,
        ExpressionError,
        Graph,
        JsonCodec,
        Node,
        Operator,
        OperatorContext,
        OperatorInputError,
        OperatorMetadata,
        OperatorRegistry,
        ProviderError,
        RunError,
        UnknownOperatorError,
    )
    from bloge.dsl import (
        DslCompiler,
        DslExtensionProvider,
        Expression,
    )
    from bloge.llm import (
        LlmChatOperator,
        LlmMessage,
        LlmProvider,
        LlmStreamingChatOperator,
        ToolCall,
        ToolDefinition,
    )
else:
    # Each name loads its module on first use: `import bloge` costs no more than it is used.
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.agent": [
            "Agent", "AgentBuilder", "AgentCallbackContext", "AgentCheckpoint", "AgentDef",
            "AgentDslCompiler", "AgentExecutionListener", "AgentInput", "AgentLoopOperator",
            "AgentMemoryStrategy", "AgentOutput", "AgentRunError", "AgentStreamChunk",
            "AgentToolRef", "AgentUsage", "ConversationMemory", "Done", "LlmCalledPayload",
            "LoopExitedPayload", "MaxTurnsExceededError", "StreamingAgentLoopOperator", "Token",
            "Tool", "ToolCompletedPayload", "ToolDispatchedPayload", "ToolEnd", "ToolStart",
            "TurnStartedPayload", "agent_operator",
        ],
        "bloge.core": [
            "BlogeError", "BlogeUsageError", "CompileError", "DslError", "DslSyntaxError",
            "ExpressionError", "Graph", "JsonCodec", "Node", "Operator", "OperatorContext",
            "OperatorInputError", "OperatorMetadata", "OperatorRegistry", "ProviderError",
            "RunError", "UnknownOperatorError",
        ],
        "bloge.dsl": ["DslCompiler", "DslExtensionProvider", "Expression"],
        "bloge.llm": [
            "LlmChatOperator", "LlmMessage", "LlmProvider", "LlmStreamingChatOperator", "ToolCall",
            "ToolDefinition",
        ],
    })

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentBuilder",
    "AgentCallbackContext",
    "AgentCheckpoint",
    "AgentDef",
    "AgentDslCompiler",
    "AgentExecutionListener",
    "AgentInput",
    "AgentLoopOperator",
    "AgentMemoryStrategy",
    "AgentOutput",
    "AgentRunError",
    "AgentStreamChunk",
    "AgentToolRef",
    "AgentUsage",
    "BlogeError",
    "BlogeUsageError",
    "CompileError",
    "ConversationMemory",
    "Done",
    "DslCompiler",
    "DslError",
    "DslExtensionProvider",
    "DslSyntaxError",
    "Expression",
    "ExpressionError",
    "Graph",
    "JsonCodec",
    "LlmCalledPayload",
    "LlmChatOperator",
    "LlmMessage",
    "LlmProvider",
    "LlmStreamingChatOperator",
    "LoopExitedPayload",
    "MaxTurnsExceededError",
    "Node",
    "Operator",
    "OperatorContext",
    "OperatorInputError",
    "OperatorMetadata",
    "OperatorRegistry",
    "ProviderError",
    "RunError",
    "StreamingAgentLoopOperator",
    "Token",
    "Tool",
    "ToolCall",
    "ToolCompletedPayload",
    "ToolDefinition",
    "ToolDispatchedPayload",
    "ToolEnd",
    "ToolStart",
    "TurnStartedPayload",
    "UnknownOperatorError",
    "__version__",
    "agent_operator",
]
