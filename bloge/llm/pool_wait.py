"""How long model calls waited for a connection of their provider's pool.

A provider's pool holds at most ``max_connections`` connections; a call beyond that waits for
one to be free before its request is sent. :func:`measuring_pool_wait` opens a tally in the
current context (the agent loop opens one around each run); the HTTP shell of the
providers adds every wait of the calls made in that context, retries included, and the loop
reports with each model call what that call added (``LlmCalledPayload.pool_wait_ms``).
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar, Token
from typing import Self


class PoolWait:
    """Seconds the calls of one tally waited for a connection, in all; a context manager
    that opens the tally in the current context (see :func:`measuring_pool_wait`).

    A class rather than a generator-based context manager: the loop opens one around every
    model call, and this costs a fraction of ``contextlib.contextmanager``'s set-up.
    """

    __slots__ = ("_token", "seconds")

    def __init__(self) -> None:
        self.seconds = 0.0
        self._token: Token[PoolWait | None] | None = None

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._token is not None
        # A run's coroutine closed by the garbage collector (a Temporal workflow its worker
        # dropped mid-run) ends in another context, where there is nothing to undo.
        with contextlib.suppress(ValueError):
            _current.reset(self._token)


_current: ContextVar[PoolWait | None] = ContextVar("bloge_pool_wait", default=None)


def measuring_pool_wait() -> PoolWait:
    """A new tally for the calls made in this context until the ``with`` block ends."""
    return PoolWait()


def current_pool_wait() -> PoolWait | None:
    """The tally open in this context, if any (a call adds its waits to it)."""
    return _current.get()
