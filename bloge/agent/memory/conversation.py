"""``ConversationMemory``: what the model sees of a conversation, and its factories."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bloge.llm.messages import LlmMessage
from bloge.llm.tokens import DEFAULT_TOKEN_ESTIMATOR, TokenEstimator
from bloge.llm.types import LlmResponse


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """Model calls a memory made on its own (``summary`` memory's summaries)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


_NO_CALLS = MemoryUsage()


class ConversationMemory(ABC):
    """The messages an agent sends to the model, pruned by a strategy.

    System messages are never pruned. Pruning is pair-aware: an assistant message with tool
    calls and the tool messages answering it are kept or dropped together. Build one with the
    factories ``full``, ``sliding_window``, ``token_budget`` and ``summary``.
    """

    @runtime_checkable
    class Factory(Protocol):
        """Builds a memory from the initial messages (``AgentMemoryStrategy.Custom``)."""

        def create(self, initial: Sequence[LlmMessage]) -> ConversationMemory: ...

    @runtime_checkable
    class Summarizer(Protocol):
        """Condenses older messages into a summary text (``summary(n)`` memory).

        May be async, and may return an ``LlmResponse`` so that its token usage is counted
        in the run's. The calls of an :class:`~bloge.agent.memory.LlmSummarizer` are more:
        model calls of the run, reserved against its budgets and priced.
        """

        def summarize(
            self, messages: Sequence[LlmMessage]
        ) -> str | LlmResponse | Awaitable[str | LlmResponse]: ...

    @abstractmethod
    def append(self, message: LlmMessage) -> None:
        """Add one message at the end of the conversation."""

    def extend(self, messages: Iterable[LlmMessage]) -> None:
        for message in messages:
            self.append(message)

    @abstractmethod
    def messages(self) -> list[LlmMessage]:
        """The current view, oldest first: what the next model call will see."""

    async def prepare(self) -> None:  # noqa: B027 -- an optional hook; most memories need none
        """Called before each model call; ``summary`` memory summarizes here."""

    @property
    def usage(self) -> MemoryUsage:
        """Model calls this memory made itself."""
        return _NO_CALLS

    # -- factories (the appendix's static methods)

    @staticmethod
    def full(initial: Iterable[LlmMessage] = ()) -> ConversationMemory:
        """No pruning."""
        from bloge.agent.memory.pruning import FullMemory

        return FullMemory(initial)

    @staticmethod
    def sliding_window(initial: Iterable[LlmMessage], window_size: int) -> ConversationMemory:
        """All system messages plus the last ``window_size`` others (fewer to keep pairs whole)."""
        from bloge.agent.memory.pruning import SlidingWindowMemory

        return SlidingWindowMemory(initial, window_size)

    @staticmethod
    def token_budget(
        initial: Iterable[LlmMessage],
        max_tokens: int,
        token_estimator: TokenEstimator = DEFAULT_TOKEN_ESTIMATOR,
    ) -> ConversationMemory:
        """Prunes the oldest non-system messages until the estimate fits ``max_tokens``."""
        from bloge.agent.memory.pruning import TokenBudgetMemory

        return TokenBudgetMemory(initial, max_tokens, token_estimator)

    @staticmethod
    def summary(
        initial: Iterable[LlmMessage],
        summarizer: ConversationMemory.Summarizer | None,
        summary_threshold: int,
    ) -> ConversationMemory:
        """Keeps the last ``summary_threshold`` messages; older ones become a summary.

        Without a summarizer it degrades to a sliding window of ``summary_threshold``.
        """
        from bloge.agent.memory.summary import SummaryMemory

        return SummaryMemory(initial, summarizer, summary_threshold)
