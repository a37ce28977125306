"""``Leases``: the leases this process holds on its runs of one store, renewed by one task.

A run's lease says its worker still runs it; the worker renews it every third of
``store.lease``, and at once when the run may have been asked to stop (the renewal reads the
ask: see :mod:`bloge.store.cancels`). One task per event loop renews every lease held in that
loop, one after the other, rather than a task per run: a server with thousands of open
streams holds thousands of runs, and a task each is memory and scheduling for a write every
few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

from bloge.store.errors import StoreError

_log = logging.getLogger("bloge.store")

Renew = Callable[[], Awaitable[bool]]
"""Renew one run's lease; whether the run goes on (``False``: it was stopped, its lease is no
longer held)."""


class Leases:
    """The leases held in each event loop, renewed every ``every()`` seconds by one task of
    that loop (started with the first lease, ended with the last)."""

    def __init__(self, every: Callable[[], float]) -> None:
        self._every = every
        self._lock = threading.Lock()  # runs of several event loops (a server, sync calls)
        self._loops: dict[asyncio.AbstractEventLoop, _Held] = {}

    def held(self, run_id: str, renew: Renew) -> _Hold:
        """Renew run ``run_id``'s lease with ``renew`` while the ``with`` block runs (in this
        event loop); it gives the function that asks for a renewal at once (call it in this
        loop)."""
        return _Hold(self, run_id, renew)

    def _hold(self, run_id: str, renew: Renew) -> _Held:
        loop = asyncio.get_running_loop()
        with self._lock:
            held = self._loops.get(loop)
            if held is None or held.keeper.done():
                held = self._loops[loop] = _Held()
                held.keeper = loop.create_task(self._keep(loop, held),
                                               name="bloge-store-leases")
            held.renewals[run_id] = renew
        return held

    def _let_go(self, held: _Held, run_id: str, renew: Renew) -> None:
        with self._lock:
            if held.renewals.get(run_id) is renew:
                del held.renewals[run_id]
            if not held.renewals:
                held.asked.set()  # the keeper ends now, not at its next round

    async def _keep(self, loop: asyncio.AbstractEventLoop, held: _Held) -> None:
        """Renew ``held`` every ``every()`` seconds, and the asked ones at once, until no
        lease is held here."""
        tick = loop.time() + self._every()
        while held.renewals:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(tick):
                    await held.asked.wait()
            held.asked.clear()
            if loop.time() >= tick:
                tick = loop.time() + self._every()
                due = list(held.renewals)
            else:
                due = list(held.due)
            held.due.clear()
            for run_id in due:
                await self._renew(held, run_id)
        with self._lock:
            if self._loops.get(loop) is held:
                del self._loops[loop]

    async def _renew(self, held: _Held, run_id: str) -> None:
        renew = held.renewals.get(run_id)
        if renew is None:  # its run ended meanwhile
            return
        try:
            going_on = await renew()
        except StoreError as error:  # the next round tries again, before the lease ends
            _log.warning("the lease of run %s was not renewed: %s", run_id, error)
            return
        if not going_on and held.renewals.get(run_id) is renew:
            del held.renewals[run_id]


class _Hold:
    """One run's lease while a ``with`` block runs (see :meth:`Leases.held`): an object
    rather than a generator, for a run keeps it as long as it runs."""

    __slots__ = ("_held", "_leases", "_renew", "_run_id")

    def __init__(self, leases: Leases, run_id: str, renew: Renew) -> None:
        self._leases = leases
        self._run_id = run_id
        self._renew = renew
        self._held: _Held | None = None

    def __enter__(self) -> Callable[[], None]:
        self._held = self._leases._hold(self._run_id, self._renew)  # noqa: SLF001 -- its module's own
        return self.renew_now

    def __exit__(self, *exc_info: object) -> None:
        if self._held is not None:
            self._leases._let_go(self._held, self._run_id, self._renew)  # noqa: SLF001 -- as above

    def renew_now(self) -> None:
        """Ask for the run's renewal at once."""
        if self._held is not None:
            self._held.ask(self._run_id)


class _Held:
    """The leases of one event loop: each run's renewal, those asked for at once, and the
    task that renews them."""

    __slots__ = ("asked", "due", "keeper", "renewals")

    keeper: asyncio.Task[None]

    def __init__(self) -> None:
        self.renewals: dict[str, Renew] = {}
        self.due: set[str] = set()
        self.asked = asyncio.Event()

    def ask(self, run_id: str) -> None:
        self.due.add(run_id)
        self.asked.set()
