"""``LiveRuns``: the events of the runs this process is running, as they happen.

A recorded run writes its events to the store in batches; whoever watches a run live — a
server streaming it, a client re-joining it — gets each event the moment it is numbered,
from here, with the run's earlier events first, so that nothing is missed between joining and
the next batch. A run that is not live here (it ended, or another process runs it) is read
from the store instead (see :func:`bloge.store.events.follow`).

A run that tells which of its events are stored (:meth:`LiveRuns.stored`) keeps in memory only
those some watcher has yet to see or the store does not hold yet: a long stream's memory stays
that of its last moments, and who joins later reads the stored part from the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from bloge.store.records import RunEvent


class _LiveRun:
    __slots__ = ("dropped", "ended", "events", "loop", "watchers")

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        # Events let go of from the front of `events`: their count, and the last one's number.
        self.dropped = (0, 0)
        self.ended = False
        self.loop = asyncio.get_running_loop()
        self.watchers: list[_Watcher] = []  # one, or a few: a set's table would be 216 B

    def changed(self) -> None:
        """Wake the watchers waiting for the run's next event (or its end)."""
        for watcher in self.watchers:
            if watcher.waiting is not None and not watcher.waiting.done():
                watcher.waiting.set_result(None)


class _Watcher:
    """Where one watcher is: the index of the next event it reads, counting dropped ones;
    and while it waits for the next, the future that wakes it (a future of its own rather
    than an ``asyncio.Event`` per run, which would keep a queue of waiters for each open
    stream)."""

    __slots__ = ("position", "waiting")

    def __init__(self, position: int) -> None:
        self.position = position
        self.waiting: asyncio.Future[None] | None = None


class LiveRuns:
    """The live runs of one store in this process, keyed by run id. A run is watched live
    only from the event loop that runs it (the server's, or bloge's sync loop thread): an
    asyncio event cannot wake another loop, so a watcher elsewhere reads the store."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        self._runs: dict[str, _LiveRun] = {}

    def started(self, run_id: str) -> None:
        """``run_id`` runs here now, in this event loop (its events before, if it was
        resumed, are in the store)."""
        self._runs.setdefault(run_id, _LiveRun())

    def publish(self, event: RunEvent) -> None:
        live = self._runs.get(event.run_id)
        if live is None:
            return
        live.events.append(event)
        live.changed()

    def stored(self, run_id: str, seq: int) -> None:
        """The store holds the run's events up to number ``seq``: those every watcher has
        seen are let go of."""
        live = self._runs.get(run_id)
        if live is None:
            return
        count, last = live.dropped
        seen = min((w.position for w in live.watchers), default=count + len(live.events))
        drop = 0
        for event in live.events[: seen - count]:
            if event.seq > seq:
                break
            last = event.seq
            drop += 1
        if drop:
            del live.events[:drop]
            live.dropped = (count + drop, last)

    def ended(self, run_id: str) -> None:
        """The run is over: its watchers get what is left, and no one new watches it here."""
        live = self._runs.pop(run_id, None)
        if live is not None:
            live.ended = True
            live.changed()

    def is_live_here(self, run_id: str) -> bool:
        """Whether ``run_id`` runs in this process and in the running event loop."""
        live = self._runs.get(run_id)
        return live is not None and live.loop is asyncio.get_running_loop()

    def first_seq(self, run_id: str) -> int | None:
        """The number of the first event kept for a live run, above those let go of
        (``None``: none yet)."""
        live = self._runs.get(run_id)
        if live is None:
            return None
        if live.events:
            return live.events[0].seq
        count, last = live.dropped
        return last + 1 if count else None

    async def watch(self, run_id: str, *, after: int = 0) -> AsyncIterator[RunEvent]:
        """The run's events kept here numbered above ``after``, then each new one until it
        ends (those let go of already are the store's to give: see :meth:`first_seq`)."""
        live = self._runs.get(run_id)
        if live is None:
            return
        watcher = _Watcher(live.dropped[0])
        live.watchers.append(watcher)
        try:
            while True:
                while watcher.position - live.dropped[0] < len(live.events):
                    event = live.events[watcher.position - live.dropped[0]]
                    watcher.position += 1
                    if event.seq > after:
                        yield event
                if live.ended:
                    return
                watcher.waiting = live.loop.create_future()
                await watcher.waiting
        finally:
            live.watchers.remove(watcher)
