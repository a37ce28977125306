"""Ctrl-C during a run: the first cancels the run, a second ends the process at once.

Python cannot stop a thread, so a sync tool still running when its run was cancelled (or
timed out) keeps its worker thread; waiting for it at the end would hold the command for as
long as the tool takes. So the event loop here closes without waiting for worker threads, and
an interrupted command ends with :func:`exit_now` once it has said what it saved.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, NoReturn, TypeVar

from bloge_container.cli.console import EXIT_INTERRUPTED

T = TypeVar("T")


def run_cancellable(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop and return its result, as ``asyncio.run`` does.

    The first Ctrl-C (SIGINT) cancels ``main``, which then raises ``asyncio.CancelledError``
    here; a cancelled agent run gives it, as ``__cause__``, the ``AgentRunError`` holding the
    checkpoint. Any later Ctrl-C ends the process at once with exit code 130. Like
    ``asyncio.run``, this leaves SIGINT alone outside the main thread or when someone else
    already handles (or ignores) it.
    """
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    ours = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if ours:
        signal.signal(signal.SIGINT, _CancelFirst(loop, task))
    try:
        return loop.run_until_complete(task)
    finally:
        if ours:
            after = _exit_at_once if task.cancelled() else signal.default_int_handler
            signal.signal(signal.SIGINT, after)
        try:
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()  # unlike asyncio.run's, does not wait for the executor's threads


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` now, without waiting for threads (see the module)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class _CancelFirst:
    """The SIGINT handler while a run goes on: cancel it the first time, then exit."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self._loop = loop
        self._task = task
        self._seen = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self._seen:
            _exit_at_once(signum, frame)
        self._seen = True
        os.write(2, b"\ninterrupted: stopping the run (Ctrl-C again to quit at once)\n")
        # The loop may be asleep in select(); call_soon_threadsafe wakes it, where a plain
        # task.cancel() would wait for the next event to be noticed.
        self._loop.call_soon_threadsafe(self._task.cancel)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """The SIGINT handler once a run was cancelled: nothing is left worth waiting for."""
    os.write(2, b"\ninterrupted again: quitting\n")
    os._exit(EXIT_INTERRUPTED)


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
