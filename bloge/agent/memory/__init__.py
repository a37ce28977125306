"""Conversation memory: strategies and the memories that implement them."""

from bloge.agent.memory.conversation import ConversationMemory, MemoryUsage
from bloge.agent.memory.pruning import FullMemory, SlidingWindowMemory, TokenBudgetMemory
from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy
from bloge.agent.memory.summary import LlmSummarizer, SummaryMemory

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
