"""Work done every so often while a block runs: the server's look for expired calls, a
Temporal activity's heartbeat."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable


@contextlib.asynccontextmanager
async def repeating(seconds: float, work: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
    """While the body runs, ``await work()`` every ``seconds``, in a task of its own — the
    first time after ``seconds``, not at once, so a shorter body never runs it. Leaving the
    body cancels the task and waits for it to stop. ``work`` deals with its own failures:
    one it raises ends the repetition, and is raised when the body ends."""

    async def repeat() -> None:
        while True:
            await work()
            await asyncio.sleep(seconds)

    # A timer, not a task, until the first time: a body shorter than ``seconds`` (most
    # Temporal activities) costs no task created, cancelled and awaited on its way out.
    loop = asyncio.get_running_loop()
    started: list[asyncio.Task[None]] = []
    due = loop.call_later(seconds, lambda: started.append(loop.create_task(repeat())))
    try:
        yield
    finally:
        due.cancel()
        for task in started:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
