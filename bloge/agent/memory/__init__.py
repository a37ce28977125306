"""Conversation memory: strategies and the memories that implement them."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.memory.conversation import ConversationMemory, MemoryUsage
    from bloge.agent.memory.pruning import FullMemory, SlidingWindowMemory, TokenBudgetMemory
    from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy
    from bloge.agent.memory.summary import LlmSummarizer, SummaryMemory
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.agent.memory.conversation": ["ConversationMemory", "MemoryUsage"],
        "bloge.agent.memory.pruning": ["FullMemory", "SlidingWindowMemory", "TokenBudgetMemory"],
        "bloge.agent.memory.strategy": ["AgentMemoryStrategy", "MemoryStrategy"],
        "bloge.agent.memory.summary": ["LlmSummarizer", "SummaryMemory"],
    })

__all__ = [
    "AgentMemoryStrategy",
    "ConversationMemory",
    "FullMemory",
    "LlmSummarizer",
    "MemoryStrategy",
    "MemoryUsage",
    "SlidingWindowMemory",
    "SummaryMemory",
    "TokenBudgetMemory",
]
