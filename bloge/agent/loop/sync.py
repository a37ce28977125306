"""The one sync facade: run a coroutine to completion from synchronous code."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from bloge.core.errors import BlogeUsageError

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T], *, method: str) -> T:
    """``asyncio.run(coroutine)``, with a clear error inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise BlogeUsageError(
        f"{method}() was called inside a running event loop; await a{method}() instead"
    )
