"""From an ``AgentMemoryStrategy`` to the memory that implements it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from bloge.agent.memory.conversation import ConversationMemory
from bloge.agent.memory.pruning import FullMemory, SlidingWindowMemory, TokenBudgetMemory
from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy
from bloge.agent.memory.summary import SummaryMemory
from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage
from bloge.llm.tokens import TokenEstimator


def create_memory(
    strategy: MemoryStrategy,
    initial: Sequence[LlmMessage],
    *,
    token_estimator: TokenEstimator,
    summarizer: ConversationMemory.Summarizer | None,
) -> ConversationMemory:
    """A fresh memory for one run, holding ``initial``."""
    match strategy:
        case AgentMemoryStrategy.Full():
            return FullMemory(initial)
        case AgentMemoryStrategy.SlidingWindow(size, block):
            return SlidingWindowMemory(initial, size, block)
        case AgentMemoryStrategy.TokenBudget(size):
            return TokenBudgetMemory(initial, size, token_estimator)
        case AgentMemoryStrategy.Summary(size):
            return SummaryMemory(initial, summarizer, size)
        case AgentMemoryStrategy.Custom(factory):
            memory = factory.create(initial) if hasattr(factory, "create") else factory(initial)
            if not isinstance(memory, ConversationMemory):
                raise BlogeUsageError(
                    "a Custom memory factory must return a ConversationMemory, "
                    f"got {type(memory).__name__}"
                )
            return memory
        case _:
            assert_never(strategy)
