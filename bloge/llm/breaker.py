"""``CircuitBreaker``: stop calling a model whose provider keeps failing, for a cool-down.

A breaker counts, per key (a provider and a model: ``"anthropic:claude-sonnet-4-5"``), the
calls that failed over in a row (see :func:`bloge.llm.fallback.fails_over`); ``failures`` of
them open it for ``cooldown`` seconds, during which :class:`~bloge.llm.fallback.FallbackChat`
skips that model and asks the next one at once. When the cool-down ends calls go through
again; the first that fails opens the breaker anew, the first that succeeds closes it.

The counts live in :class:`BreakerStates`: in this process (:class:`LocalBreakerStates`, the
default), or shared by every worker through the run store (``bloge.store``'s
``StoreBreakerStates``), so that one worker's knowledge of an outage spares the others. Times
are POSIX seconds, comparable across machines.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bloge.core.errors import BlogeUsageError

_log = logging.getLogger("bloge.llm.breaker")

#: Calls failing over in a row that open a breaker, by default.
DEFAULT_FAILURES = 5
#: Seconds an open breaker skips its model, by default.
DEFAULT_COOLDOWN = 30.0


@dataclass(frozen=True, slots=True)
class BreakerState:
    """One key's count: ``failures`` in a row, and until when (POSIX seconds) its breaker is
    open (``None``: it never opened since its last success)."""

    failures: int = 0
    open_until: float | None = None


CLOSED = BreakerState()


@runtime_checkable
class BreakerStates(Protocol):
    """Where breakers keep their counts. Each method is one atomic step, so that workers
    sharing the states never lose a count."""

    async def state(self, key: str) -> BreakerState:
        """The count of ``key`` (:data:`CLOSED` when it has none)."""
        ...

    async def failed(self, key: str, *, failures: int, until: float) -> bool:
        """Count one more failure in a row of ``key``; with ``failures`` or more, open its
        breaker until ``until``. Whether it is open now."""
        ...

    async def succeeded(self, key: str) -> None:
        """A call of ``key`` succeeded: its count starts again, its breaker is closed."""
        ...


class LocalBreakerStates:
    """Breaker counts in this process."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[str, BreakerState] = {}

    async def state(self, key: str) -> BreakerState:
        return self._counts.get(key, CLOSED)

    async def failed(self, key: str, *, failures: int, until: float) -> bool:
        count = self._counts.get(key, CLOSED)
        opened = count.failures + 1 >= failures
        self._counts[key] = BreakerState(count.failures + 1,
                                         until if opened else count.open_until)
        return opened

    async def succeeded(self, key: str) -> None:
        self._counts.pop(key, None)

    def __repr__(self) -> str:
        return f"LocalBreakerStates({len(self._counts)} keys)"


class CircuitBreaker:
    """Opens after ``failures`` calls in a row failed over, for ``cooldown`` seconds (see the
    module). ``states`` keeps the counts (this process's by default); ``clock`` tells the
    time in POSIX seconds. A breaker whose states cannot be read or written (the store is
    down) lets every call through, and says so in the log: a broken store must not stop the
    model calls it only watches."""

    __slots__ = ("_clock", "cooldown", "failures", "states")

    def __init__(self, *, failures: int = DEFAULT_FAILURES, cooldown: float = DEFAULT_COOLDOWN,
                 states: BreakerStates | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        if not isinstance(failures, int) or isinstance(failures, bool) or failures < 1:
            raise BlogeUsageError(f"a circuit breaker's failures must be a whole number >= 1, "
                                  f"got {failures!r}")
        if not (isinstance(cooldown, int | float) and math.isfinite(cooldown) and cooldown > 0):
            raise BlogeUsageError(f"a circuit breaker's cooldown must be a number of seconds "
                                  f"> 0, got {cooldown!r}")
        self.failures = failures
        self.cooldown = float(cooldown)
        self.states: BreakerStates = states if states is not None else LocalBreakerStates()
        self._clock = clock

    async def state(self, key: str) -> BreakerState:
        """The count of ``key`` (see :attr:`open_for`); :data:`CLOSED` when unreadable."""
        try:
            return await self.states.state(key)
        except Exception:  # noqa: BLE001 -- an unreadable state lets the call through (see class)
            _log.warning("circuit breaker states unreadable for %s; calling it", key,
                         exc_info=True)
            return CLOSED

    def open_for(self, state: BreakerState) -> float:
        """Seconds a breaker in ``state`` stays open; 0.0 when it is closed."""
        until = state.open_until
        return 0.0 if until is None else max(0.0, until - self._clock())

    async def failed(self, key: str) -> bool:
        """Count a call of ``key`` that failed over; whether its breaker is open now."""
        try:
            opened = await self.states.failed(key, failures=self.failures,
                                              until=self._clock() + self.cooldown)
        except Exception:  # noqa: BLE001 -- see the class
            _log.warning("circuit breaker states unwritable for %s", key, exc_info=True)
            return False
        if opened:
            _log.warning("circuit breaker for %s is open for %gs", key, self.cooldown)
        return opened

    async def succeeded(self, key: str, state: BreakerState) -> None:
        """A call of ``key`` answered; ``state`` is the one read before it: a key without
        failures is not written (a shared store is written only when a count changes)."""
        if not state.failures:
            return
        try:
            await self.states.succeeded(key)
        except Exception:  # noqa: BLE001 -- see the class
            _log.warning("circuit breaker states unwritable for %s", key, exc_info=True)

    def __repr__(self) -> str:
        return (f"CircuitBreaker(failures={self.failures}, cooldown={self.cooldown:g}, "
                f"states={self.states!r})")
