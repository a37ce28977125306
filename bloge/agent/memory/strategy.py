"""``AgentMemoryStrategy``: which conversation memory an agent uses (the DSL's ``memory =``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias


class AgentMemoryStrategy:
    """The memory strategies. ``AgentMemoryStrategy.Full()`` is the default.

    ============================== ================== ===========================================
    Strategy                       DSL                Keeps
    ============================== ================== ===========================================
    ``Full()``                     ``full()``         every message
    ``SlidingWindow(n)``           ``sliding_window`` system messages + the last n others
    ``TokenBudget(n)``             ``token_budget``   the newest messages that fit in n tokens
    ``Summary(n)``                 ``summary``        the last n messages + a summary of the rest
    ``Custom(factory)``            (Python only)      whatever ``factory.create(initial)`` builds
    ============================== ================== ===========================================
    """

    @dataclass(frozen=True, slots=True)
    class Full:
        def to_dsl(self) -> str:
            return "full()"

    @dataclass(frozen=True, slots=True)
    class SlidingWindow:
        """The newest ``window_size`` messages. With a ``block`` above 1 the window moves
        ``block`` messages at a time, so that the providers' prompt caches keep reading the
        same prefix for several turns (DSL ``sliding_window(n, block)``; setting
        ``bloge.agents.window-block``)."""

        window_size: int
        block: int = 1

        def to_dsl(self) -> str:
            if self.block == 1:
                return f"sliding_window({self.window_size})"
            return f"sliding_window({self.window_size}, {self.block})"

    @dataclass(frozen=True, slots=True)
    class TokenBudget:
        max_tokens: int

        def to_dsl(self) -> str:
            return f"token_budget({self.max_tokens})"

    @dataclass(frozen=True, slots=True)
    class Summary:
        threshold: int

        def to_dsl(self) -> str:
            return f"summary({self.threshold})"

    @dataclass(frozen=True, slots=True)
    class Custom:
        """A user-supplied ``ConversationMemory.Factory``; not expressible in the DSL."""

        factory: Any

        def to_dsl(self) -> str:
            return f"<custom {type(self.factory).__name__}>"


MemoryStrategy: TypeAlias = (
    AgentMemoryStrategy.Full
    | AgentMemoryStrategy.SlidingWindow
    | AgentMemoryStrategy.TokenBudget
    | AgentMemoryStrategy.Summary
    | AgentMemoryStrategy.Custom
)

#: DSL function name → (strategy class, its single size argument's meaning)
DSL_STRATEGIES: dict[str, tuple[type[Any], str | None]] = {
    "full": (AgentMemoryStrategy.Full, None),
    "sliding_window": (AgentMemoryStrategy.SlidingWindow, "window size"),
    "token_budget": (AgentMemoryStrategy.TokenBudget, "token budget"),
    "summary": (AgentMemoryStrategy.Summary, "summary threshold"),
}
