"""How long model calls waited for a connection of their provider's pool.

A provider's pool holds at most ``max_connections`` connections; a call beyond that waits for
one to be free before its request is sent. :func:`measuring_pool_wait` opens a tally in the
current context (the agent loop opens one around each model call); the HTTP shell of the
providers adds every wait of the calls made in that context, retries included, and the loop
reports the sum with the call (``LlmCalledPayload.pool_wait_ms``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class PoolWait:
    """Seconds the calls of one tally waited for a connection, in all."""

    seconds: float = 0.0


_current: ContextVar[PoolWait | None] = ContextVar("bloge_pool_wait", default=None)


@contextlib.contextmanager
def measuring_pool_wait() -> Iterator[PoolWait]:
    """A new tally for the calls made in this context until the ``with`` block ends."""
    tally = PoolWait()
    token = _current.set(tally)
    try:
        yield tally
    finally:
        _current.reset(token)


def current_pool_wait() -> PoolWait | None:
    """The tally open in this context, if any (a call adds its waits to it)."""
    return _current.get()
