"""The agent extension: agent definitions, their DSL compiler and builder."""

from bloge.agent.builder import AgentBuilder
from bloge.agent.compiler import AgentDslCompiler
from bloge.agent.definition import AgentDef, AgentToolRef
from bloge.agent.extension import AgentExtensionProvider
from bloge.agent.memory import AgentMemoryStrategy, MemoryStrategy
from bloge.llm.types import ToolDefinition

__all__ = [
    "AgentBuilder",
    "AgentDef",
    "AgentDslCompiler",
    "AgentExtensionProvider",
    "AgentMemoryStrategy",
    "AgentToolRef",
    "MemoryStrategy",
    "ToolDefinition",
]
