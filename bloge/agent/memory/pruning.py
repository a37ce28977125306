"""The pruning memories: full, sliding window and token budget."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from bloge.agent.memory.conversation import ConversationMemory
from bloge.agent.memory.units import Units, tail_start
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
    """System messages pinned at the top; the rest in pair-aware units pruned from the oldest.

    Subclasses say how much the units may weigh (:meth:`_room`). The initial messages are
    grouped from the tail (see :func:`~bloge.agent.memory.units.tail_start`): a memory given a
    long history costs the window it keeps, plus one pass that finds the system messages.
    """

    __slots__ = ("_system", "_units")

    def __init__(
        self, initial: Iterable[LlmMessage], weigh: Callable[[LlmMessage], int]
    ) -> None:
        messages = initial if isinstance(initial, Sequence) else list(initial)
        self._system: list[LlmMessage] = []
        self._units = Units(weigh)
        for message in [message for message in messages if message.role == "system"]:
            self._pin(message)
        for index in range(tail_start(messages, weigh, self._room()), len(messages)):
            if (message := messages[index]).role != "system":
                self._units.add(message)
        self._prune()

    def append(self, message: LlmMessage) -> None:
        if message.role == "system":
            self._pin(message)
        else:
            self._units.add(message)
        self._prune()

    def _pin(self, message: LlmMessage) -> None:
        self._system.append(message)

    def _prune(self) -> None:
        self._units.drop_oldest_while(lambda: self._units.weight > self._room())

    def _room(self) -> int:
        """How much the units may weigh."""
        raise NotImplementedError

    def messages(self) -> list[LlmMessage]:
        return [*self._system, *self._units.messages()]


class SlidingWindowMemory(_PinnedSystemMemory):
    """All system messages plus the newest ``window_size`` others.

    The window holds fewer messages when a tool-call pair straddles its edge, and more when
    the newest pair alone is larger than the window (it is never split). With ``block`` above
    1, a window that overflows drops ``block`` messages at once (to ``window_size - block +
    1``), so that its first message (and the prompt prefix a provider caches) stays for the
    next ``block - 1`` messages instead of changing with each one.
    """

    __slots__ = ("block", "window_size")

    def __init__(self, initial: Iterable[LlmMessage], window_size: int, block: int = 1) -> None:
        if window_size < 1:
            raise ValueError(f"window_size must be >= 1, got {window_size}")
        if not 1 <= block <= window_size:
            raise ValueError(f"block must be between 1 and the window size {window_size}, "
                             f"got {block}")
        self.window_size = window_size
        self.block = block
        super().__init__(initial, _one)

    def _room(self) -> int:
        return self.window_size

    def _prune(self) -> None:
        # An overflowing window drops ``block`` messages at once (one, without blocks).
        units = self._units
        if units.weight > self.window_size:
            keep = self.window_size - self.block + 1
            units.drop_oldest_while(lambda: units.weight > keep)


def _one(message: LlmMessage) -> int:
    return 1


class TokenBudgetMemory(_PinnedSystemMemory):
    """The newest messages whose estimated tokens, with the system messages, fit the budget.

    Each message is estimated when it arrives (a long initial history: only its tail); pruning
    per turn costs only the messages dropped. The newest tool-call pair is kept even when it
    alone exceeds the budget.
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

    def _pin(self, message: LlmMessage) -> None:
        self._system_tokens += self.estimator.estimate(message)
        super()._pin(message)

    def _room(self) -> int:
        return self.max_tokens - self._system_tokens

    @property
    def estimated_tokens(self) -> int:
        """The estimated size of the current view."""
        return self._system_tokens + self._units.weight
