"""The one sync facade: run a coroutine from synchronous code on bloge's event-loop thread.

DESIGN. Every sync entry point (an agent operator's ``execute()`` and ``resume()``,
``Agent.run()``, ``Store.close()``, the autopilot's sync methods) submits its coroutine to one
long-lived event loop, which runs on a daemon thread that bloge starts on first use, and
blocks the calling thread until the run ends.
Why one loop rather than ``asyncio.run()`` per call:

- Connections. A provider's ``httpx`` pool belongs to the loop that opened it. With one loop,
  every sync call reuses the same connections (one TCP and TLS handshake, not one per call)
  and nothing is ever left bound to a closed loop ("Event loop is closed" on the second call).
- Cost. ``asyncio.run()`` builds and tears down a loop per call; handing a coroutine to a
  running loop costs two thread switches instead — about the same for a trivial run, less
  for a real one, and far less once connections are reused (bench/bench_sync.py).
- Threads. Any number of threads may call at once (a FastAPI ``def`` endpoint runs in a
  thread pool); their runs interleave on the one loop as tasks.

What it costs: code that blocks the loop thread — a listener doing slow I/O, an async
operator calling blocking functions — delays every concurrent sync call. Sync operators are
not a problem: they run on the :mod:`~bloge.core.workers` pool. The caller's context
variables are visible to the run. ``KeyboardInterrupt`` (or any exception raised in the
calling thread while it waits) cancels the run on the loop thread, waits until the run has
ended (its listeners see exit reason ``"cancelled"``), then propagates; a second Ctrl-C stops
the waiting. The thread is a daemon, so it never holds the interpreter at exit (where what still
runs on the loop is cancelled, for up to :data:`SETTLE_TIMEOUT` seconds); a child made by
``os.fork()`` starts a loop thread of its own on first use.

Inside a running event loop the facade refuses with a clear error (await the ``a``-method
instead): blocking that loop until the run ends would stall it, or deadlock if the run is
itself scheduled there.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import threading
from collections.abc import Coroutine
from concurrent import futures
from typing import Any, Generic, TypeVar

from bloge.core.errors import BlogeUsageError

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T], *, method: str) -> T:
    """Run ``coroutine`` on bloge's loop thread and return its result (or raise its error);
    a clear error inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _LOOP_THREAD.run(coroutine)
    coroutine.close()
    raise BlogeUsageError(
        f"{method}() was called inside a running event loop; await a{method}() instead"
    )


class _LoopThread:
    """An event loop running forever on a daemon thread, started on first use."""

    __slots__ = ("_lock", "_loop")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        call = _Call(coroutine, self._loop or self._start())
        try:
            call.submit()
            return call.outcome.result()
        except BaseException:
            if not call.outcome.done():  # interrupted while waiting: end the run, then go on
                call.cancel()
                futures.wait([call.outcome])  # a second interrupt stops the waiting
            raise

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=_serve, args=(loop,), name="bloge-event-loop",
                                 daemon=True).start()
                self._loop = loop
                atexit.register(_settle, loop, os.getpid())
            return self._loop

    def forget(self) -> None:
        """After ``fork()``: the loop's thread is gone; the next call starts another."""
        self._lock = threading.Lock()
        self._loop = None


#: How long the exit waits for the loop's last tasks to see their cancellation (seconds).
SETTLE_TIMEOUT = 2.0


def _settle(loop: asyncio.AbstractEventLoop, pid: int) -> None:
    """At exit: cancel what still runs on the loop — a store's connection pool workers, say,
    of a store nobody closed — and let it end, so that no task is destroyed pending ("Task
    was destroyed but it is pending!" for each, at every exit). Bounded: a task that ignores
    its cancellation does not hold the exit."""
    if os.getpid() != pid or loop.is_closed() or not loop.is_running():
        return  # a forked child's copy of the loop: its thread stayed in the parent
    settled = asyncio.run_coroutine_threadsafe(_cancel_all(), loop)
    futures.wait([settled], timeout=SETTLE_TIMEOUT)


async def _cancel_all() -> None:
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    while True:
        try:
            loop.run_forever()
        except (KeyboardInterrupt, SystemExit):
            # A task raising these (a tool calling sys.exit(), say) stops run_forever. Its
            # caller has already received the exception; the loop keeps serving the others.
            continue


class _Call(Generic[T]):
    """One coroutine handed from a waiting thread to the loop thread."""

    __slots__ = ("_coroutine", "_loop", "_task", "outcome")

    def __init__(self, coroutine: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop) -> None:
        self._coroutine = coroutine
        self._loop = loop
        self._task: asyncio.Task[T] | None = None
        self.outcome: futures.Future[T] = futures.Future()

    def submit(self) -> None:
        # The task starts in a copy of the caller's context, so its context variables carry over.
        self._loop.call_soon_threadsafe(self._start, context=contextvars.copy_context())

    def cancel(self) -> None:
        # Callbacks queued by one thread run in order: if _start was queued, it runs first.
        self._loop.call_soon_threadsafe(self._cancel)

    def _start(self) -> None:
        self._task = self._loop.create_task(self._coroutine)
        self._task.add_done_callback(self._finished)

    def _cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            return
        self._coroutine.close()  # interrupted before the start was queued
        self.outcome.set_exception(asyncio.CancelledError())

    def _finished(self, task: asyncio.Task[T]) -> None:
        if task.cancelled():
            self.outcome.set_exception(asyncio.CancelledError())
        elif (error := task.exception()) is not None:
            self.outcome.set_exception(error)
        else:
            self.outcome.set_result(task.result())


_LOOP_THREAD = _LoopThread()
os.register_at_fork(after_in_child=_LOOP_THREAD.forget)
