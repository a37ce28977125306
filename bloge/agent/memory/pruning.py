"""The pruning memories: full, sliding window and token budget."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bloge.agent.memory.conversation import ConversationMemory
from bloge.agent.memory.units import Units
from bloge.llm.messages import LlmMessage
from bloge.llm.tokens import TokenEstimator


class FullMemory(ConversationMemory):
    """Keeps every message: cheapest in CPU, most expensive in tokens."""

    __slots__ = ("_messages",)

    def __init__(self, initial: Iterable[LlmMessage] = ()) -> None:
        self._messages = list(initial)

    def append(self, message: LlmMessage) -> None:
        self._messages.append(message)

    def messages(self) -> list[LlmMessage]:
        return self._messages.copy()


class _PinnedSystemMemory(ConversationMemory):
    """System messages pinned at the top; the rest in pair-aware units pruned from the oldest."""

    __slots__ = ("_system", "_units")

    def __init__(
        self, initial: Iterable[LlmMessage], weigh: Callable[[LlmMessage], int]
    ) -> None:
        self._system: list[LlmMessage] = []
        self._units = Units(weigh)
        for message in initial:
            self._add(message)
        self._prune()

    def append(self, message: LlmMessage) -> None:
        self._add(message)
        self._prune()

    def _add(self, message: LlmMessage) -> None:
        if message.role == "system":
            self._system.append(message)
        else:
            self._units.add(message)

    def _prune(self) -> None:
        self._units.drop_oldest_while(self._over_limit)

    def _over_limit(self) -> bool:
        raise NotImplementedError

    def messages(self) -> list[LlmMessage]:
        return [*self._system, *self._units.messages()]


class SlidingWindowMemory(_PinnedSystemMemory):
    """All system messages plus the newest ``window_size`` others.

    The window holds fewer messages when a tool-call pair straddles its edge, and more when
    the newest pair alone is larger than the window (it is never split).
    """

    __slots__ = ("window_size",)

    def __init__(self, initial: Iterable[LlmMessage], window_size: int) -> None:
        if window_size < 1:
            raise ValueError(f"window_size must be >= 1, got {window_size}")
        self.window_size = window_size
        super().__init__(initial, lambda message: 1)

    def _over_limit(self) -> bool:
        return self._units.count > self.window_size


class TokenBudgetMemory(_PinnedSystemMemory):
    """The newest messages whose estimated tokens, with the system messages, fit the budget.

    Each message is estimated once, when it arrives; pruning per turn costs only the messages
    dropped. The newest tool-call pair is kept even when it alone exceeds the budget.
    """

    __slots__ = ("_system_tokens", "estimator", "max_tokens")

    def __init__(
        self, initial: Iterable[LlmMessage], max_tokens: int, estimator: TokenEstimator
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.max_tokens = max_tokens
        self.estimator = estimator
        self._system_tokens = 0
        super().__init__(initial, estimator.estimate)

    def _add(self, message: LlmMessage) -> None:
        if message.role == "system":
            self._system_tokens += self.estimator.estimate(message)
        super()._add(message)

    def _over_limit(self) -> bool:
        return self._system_tokens + self._units.weight > self.max_tokens

    @property
    def estimated_tokens(self) -> int:
        """The estimated size of the current view."""
        return self._system_tokens + self._units.weight
