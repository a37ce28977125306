"""A run's async chunks iterated from synchronous code, on bloge's event-loop thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from typing import Any, TypeVar

from bloge.core.errors import BlogeUsageError
from bloge.core.sync import run_sync

T = TypeVar("T")
_OVER: Any = object()


def iterate_sync(chunks: AsyncGenerator[T, None], *, method: str) -> Iterator[T]:
    """``chunks`` as a sync iterator: each ``next()`` takes one chunk on the loop thread of
    :func:`~bloge.core.sync.run_sync` (so a slow reader slows the run, as with
    ``async for``); closing the iterator early (``break``) closes ``chunks``, which cancels
    the run. Inside a running event loop, a clear error at once: iterate ``a{method}()``
    with ``async for`` there."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _iterate(chunks, method)
    raise BlogeUsageError(f"{method}() was called inside a running event loop; use "
                          f"`async for chunk in ...a{method}(...)` instead")


def _iterate(chunks: AsyncGenerator[T, None], method: str) -> Iterator[T]:
    try:
        while (chunk := run_sync(_next(chunks), method=method)) is not _OVER:
            yield chunk
    finally:
        run_sync(_close(chunks), method=method)


async def _next(chunks: AsyncGenerator[T, None]) -> Any:
    # A task cannot end by raising StopAsyncIteration cleanly: the end is a value.
    try:
        return await anext(chunks)
    except StopAsyncIteration:
        return _OVER


async def _close(chunks: AsyncGenerator[T, None]) -> None:
    await chunks.aclose()
