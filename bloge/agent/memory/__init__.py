"""Conversation memory: strategies and the memories that implement them."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.agent.memory.conversation import ConversationMemory as ConversationMemory
    from bloge.agent.memory.conversation import MemoryUsage as MemoryUsage
    from bloge.agent.memory.pruning import FullMemory as FullMemory
    from bloge.agent.memory.pruning import SlidingWindowMemory as SlidingWindowMemory
    from bloge.agent.memory.pruning import TokenBudgetMemory as TokenBudgetMemory
    from bloge.agent.memory.strategy import AgentMemoryStrategy as AgentMemoryStrategy
    from bloge.agent.memory.strategy import MemoryStrategy as MemoryStrategy
    from bloge.agent.memory.summary import LlmSummarizer as LlmSummarizer
    from bloge.agent.memory.summary import SummaryMemory as SummaryMemory
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
