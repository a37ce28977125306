"""``Portal``: an event loop on a thread of its own, where MCP sessions live.

An MCP session is a set of tasks (a process's pipes, a reader, a dispatcher) that must be
entered and left on one event loop, while the application that uses it may start up
synchronously (``bloge check``), run several ``asyncio.run`` one after another (the CLI) or
serve on uvicorn's loop. Sessions therefore run here, and the application reaches them
through :meth:`Portal.run` (blocking, from synchronous code) and :meth:`Portal.call` (from
any other event loop; cancelling the caller cancels the work here).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Portal:
    """A daemon thread running an asyncio loop until :meth:`close`."""

    __slots__ = ("_loop", "_thread")

    def __init__(self, name: str = "bloge-mcp") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``work`` on the portal's loop."""
        return asyncio.run_coroutine_threadsafe(work, self._loop)

    def run(self, work: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run ``work`` there and wait for its result (``TimeoutError`` after ``timeout``
        seconds, when the work is cancelled)."""
        future = self.submit(work)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Await ``work`` run there, from another loop."""
        return await asyncio.wrap_future(self.submit(work))

    def close(self) -> None:
        """Stop the loop and its thread (after whatever closing the caller ran through
        :meth:`run`)."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()
