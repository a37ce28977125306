"""Ctrl-C or SIGTERM during a run: the first cancels the run, a second ends the process at
once.

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
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any, NoReturn, TypeVar

from bloge_container.cli.console import EXIT_INTERRUPTED, EXIT_TERMINATED

T = TypeVar("T")

_Handler = Callable[[int, FrameType | None], Any] | int | None


class Interrupted(asyncio.CancelledError):
    """The run was cancelled by a signal to this process (``SIGINT`` or ``SIGTERM``).

    Like the ``CancelledError`` it replaces, its ``__cause__`` is the cancelled run's
    ``AgentRunError`` (with the checkpoint) when the run got that far.
    """

    def __init__(self, signum: signal.Signals) -> None:
        super().__init__(signum.name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's code for the signal: 130 for Ctrl-C, 143 for SIGTERM."""
        return EXIT_TERMINATED if self.signum == signal.SIGTERM else EXIT_INTERRUPTED

    @property
    def lead(self) -> str:
        """How the report of the stopped run begins."""
        return "terminated (SIGTERM)" if self.signum == signal.SIGTERM else "interrupted"


def run_cancellable(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop and return its result, as ``asyncio.run`` does.

    The first Ctrl-C (SIGINT) or SIGTERM cancels ``main``; this then raises
    :class:`Interrupted` (an ``asyncio.CancelledError``) naming the signal, whose
    ``__cause__`` is what a cancelled agent run gives: the ``AgentRunError`` holding the
    checkpoint. A run cancelled otherwise (``bloge runs cancel``) raises the plain
    ``CancelledError``. Any later signal ends the process at once with its exit code (130 or
    143). Like ``asyncio.run``, this leaves a signal alone outside the main thread or when
    someone else already handles (or ignores) it.
    """
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    stopper = _CancelFirst(loop, task)
    ours = _take_signals(stopper)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError as exc:
        if stopper.seen is None:
            raise
        raise Interrupted(stopper.seen) from exc.__cause__
    finally:
        for signum, before in ours.items():
            signal.signal(signum, _exit_at_once if task.cancelled() else before)
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


def _take_signals(handler: _CancelFirst) -> dict[signal.Signals, _Handler]:
    """Handle SIGINT and SIGTERM with ``handler`` where Python's defaults would; return the
    handlers to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    taken: dict[signal.Signals, _Handler] = {}
    for signum, default in defaults.items():
        if signal.getsignal(signum) is default:
            taken[signum] = signal.signal(signum, handler)
    return taken


class _CancelFirst:
    """The signal handler while a run goes on: cancel it the first time, then exit."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self._loop = loop
        self._task = task
        self.seen: signal.Signals | None = None
        """The first signal received, once one was."""

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.seen is not None:
            _exit_at_once(signum, frame)
        self.seen = signal.Signals(signum)
        if self.seen == signal.SIGTERM:
            os.write(2, b"\nterminated (SIGTERM): stopping the run (SIGTERM again to quit at "
                        b"once)\n")
        else:
            os.write(2, b"\ninterrupted: stopping the run (Ctrl-C again to quit at once)\n")
        # The loop may be asleep in select(); call_soon_threadsafe wakes it, where a plain
        # task.cancel() would wait for the next event to be noticed.
        self._loop.call_soon_threadsafe(self._task.cancel)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """The handler of a second signal: nothing is left worth waiting for."""
    if signum == signal.SIGTERM:
        os.write(2, b"\nterminated again: quitting\n")
        os._exit(EXIT_TERMINATED)
    os.write(2, b"\ninterrupted again: quitting\n")
    os._exit(EXIT_INTERRUPTED)


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
