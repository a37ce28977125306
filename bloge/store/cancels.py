"""``CancelSignals``: the worker of a run hears within a second that someone asked the run
to stop.

Asking a run to stop is a write to the store (:meth:`~bloge.store.store.Store.cancel_run`)
that any process may make: ``bloge runs cancel``, another server's ``POST /runs/{id}/cancel``.
The worker running the run reads it when it renews the run's lease — every third of the
lease, seconds later, after a short run has finished. So the worker waits for the ask too:
PostgreSQL tells it (``LISTEN``/``NOTIFY`` on :data:`CHANNEL`), a SQLite store is asked every
:data:`POLL_SECONDS` which of the runs this process waits for were asked to stop, and an ask
made in this process wakes its run at once. The worker then renews the lease at once, which
reads the ask.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection

from bloge.store.errors import StoreError

_log = logging.getLogger("bloge.store")

#: The PostgreSQL notification channel a cancel is told on; its payload is the run id.
CHANNEL = "bloge_cancel"

#: How often a store that cannot notify (SQLite) is asked for the cancels, in seconds; also
#: how long a lost PostgreSQL listener waits before it listens again.
POLL_SECONDS = 0.5

Asked = Callable[[Collection[str]], Awaitable[Collection[str]]]
"""Which of these runs were asked to stop."""
Listen = Callable[[], AsyncGenerator[str | None, None]]
"""The ids of runs asked to stop as the asks come, and ``None`` now and then (first once the
listening began, then at least every :data:`POLL_SECONDS`)."""


_Waiter = tuple[asyncio.AbstractEventLoop, Callable[[], None]]
"""Who waits for a run's ask: its event loop, and what to call there."""


class CancelSignals:
    """The runs of one store that this process runs, each with a function called when the run
    may have been asked to stop. ``asked`` reads the asks; ``listen``, where the store notifies,
    tells them as they come (else they are polled)."""

    def __init__(self, *, asked: Asked, listen: Listen | None = None) -> None:
        self._asked = asked
        self._listen = listen
        self._lock = threading.Lock()  # runs of several event loops (a server, sync calls)
        # A run's waiters: one, or a few (a list: a set's table alone would be 216 B a run).
        self._waiting: dict[str, list[_Waiter]] = {}
        self._watchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                                  asyncio.Task[None]] = (
            weakref.WeakKeyDictionary())

    def watching(self, run_id: str, told: Callable[[], None]) -> _Watch:
        """Call ``told`` (in this event loop) when run ``run_id`` may have been asked to
        stop, while the ``with`` block runs."""
        return _Watch(self, run_id, told)

    def _watch_for(self, run_id: str, waiter: _Waiter) -> None:
        loop = waiter[0]
        with self._lock:
            self._waiting.setdefault(run_id, []).append(waiter)
            watcher = self._watchers.get(loop)
            if watcher is None or watcher.done():
                self._watchers[loop] = loop.create_task(self._watch(loop),
                                                        name="bloge-store-cancels")

    def _stop_watching(self, run_id: str, waiter: _Waiter) -> None:
        with self._lock:
            waiters = self._waiting.get(run_id, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._waiting.pop(run_id, None)

    def wake(self, run_id: str) -> None:
        """Run ``run_id`` was asked to stop: whoever waits for it here hears it."""
        with self._lock:
            waiters = list(self._waiting.get(run_id, ()))
        for loop, told in waiters:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits
                loop.call_soon_threadsafe(told)

    async def aclose(self) -> None:
        """Stop listening in the running event loop (the store closes)."""
        watcher = self._watchers.pop(asyncio.get_running_loop(), None)
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def _waited_for(self, loop: asyncio.AbstractEventLoop) -> list[str]:
        with self._lock:
            return [run_id for run_id, waiters in self._waiting.items()
                    if any(waiting is loop for waiting, _ in waiters)]

    async def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Tell the runs of ``loop`` their asks until none waits (or the store closes)."""
        while self._waited_for(loop):
            try:
                if self._listen is None:
                    await asyncio.sleep(POLL_SECONDS)
                    await self._poll(loop)
                else:
                    await self._listened(loop)
            except StoreError as error:  # the lease's renewal still reads the ask
                _log.warning("cancels are not heard at once: %s", error)
                await asyncio.sleep(POLL_SECONDS)

    async def _listened(self, loop: asyncio.AbstractEventLoop) -> None:
        assert self._listen is not None
        told = self._listen()
        began = False
        try:
            async for run_id in told:
                if run_id is not None:
                    self.wake(run_id)
                    continue
                if not self._waited_for(loop):
                    return
                if not began:  # the asks made before the listening began
                    began = True
                    await self._poll(loop)
        finally:
            await told.aclose()

    async def _poll(self, loop: asyncio.AbstractEventLoop) -> None:
        run_ids = self._waited_for(loop)
        if run_ids:
            for run_id in await self._asked(run_ids):
                self.wake(run_id)


class _Watch:
    """One run watched for its ask while a ``with`` block runs (see
    :meth:`CancelSignals.watching`): an object rather than a generator, for a run keeps it
    as long as it runs."""

    __slots__ = ("_run_id", "_signals", "_told", "_waiter")

    def __init__(self, signals: CancelSignals, run_id: str, told: Callable[[], None]) -> None:
        self._signals = signals
        self._run_id = run_id
        self._told = told
        self._waiter: _Waiter | None = None

    def __enter__(self) -> None:
        self._waiter = (asyncio.get_running_loop(), self._told)
        self._signals._watch_for(self._run_id, self._waiter)  # noqa: SLF001 -- its module's own

    def __exit__(self, *exc_info: object) -> None:
        if self._waiter is not None:
            self._signals._stop_watching(self._run_id, self._waiter)  # noqa: SLF001 -- as above
