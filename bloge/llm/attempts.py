"""How many attempts a provider call may make while another model stands by.

:class:`~bloge.llm.fallback.ModelFallback` asks a model that has a fallback after it with
:func:`attempts_capped`: the provider's retries of a failure stop after that many attempts,
and the next model answers instead of the same one being waited for (a rate limit's
``Retry-After`` can be a minute). The last model keeps its provider's whole retry policy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_cap: ContextVar[int | None] = ContextVar("bloge_attempt_cap", default=None)


def attempt_cap() -> int | None:
    """The most attempts a provider call in this context may make; ``None``: its policy's."""
    return _cap.get()


@contextlib.contextmanager
def attempts_capped(attempts: int | None) -> Iterator[None]:
    """Cap the attempts of the provider calls made in this context (``None``: no cap)."""
    token = _cap.set(attempts)
    try:
        yield
    finally:
        _cap.reset(token)
