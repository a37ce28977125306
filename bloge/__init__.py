"""bloge for Python: declarative LLM agents.

The curated public surface. Everything here is stable API; modules not re-exported here
are internal and may change.
"""

from bloge.agent import (
    AgentBuilder,
    AgentDef,
    AgentDslCompiler,
    AgentMemoryStrategy,
    AgentToolRef,
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
    OperatorMetadata,
    OperatorRegistry,
    ProviderError,
    RunError,
    UnknownOperatorError,
)
from bloge.dsl import DslCompiler, DslExtensionProvider, Expression
from bloge.llm import LlmMessage, LlmProvider, ToolCall, ToolDefinition

__version__ = "0.1.0"

__all__ = [
    "AgentBuilder",
    "AgentDef",
    "AgentDslCompiler",
    "AgentMemoryStrategy",
    "AgentToolRef",
    "BlogeError",
    "BlogeUsageError",
    "CompileError",
    "DslCompiler",
    "DslError",
    "DslExtensionProvider",
    "DslSyntaxError",
    "Expression",
    "ExpressionError",
    "Graph",
    "JsonCodec",
    "LlmMessage",
    "LlmProvider",
    "Node",
    "Operator",
    "OperatorContext",
    "OperatorMetadata",
    "OperatorRegistry",
    "ProviderError",
    "RunError",
    "ToolCall",
    "ToolDefinition",
    "UnknownOperatorError",
    "__version__",
]
