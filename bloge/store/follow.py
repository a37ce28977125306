"""Following a run's events: what a re-joined stream reads, in this process or another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from bloge.store.records import RunEvent, RunStatus
from bloge.store.store import Store

#: How often a run that another process runs is read again, in seconds.
POLL_SECONDS = 0.25


async def follow(store: Store, run_id: str, *, after: int = 0,
                 poll: float = POLL_SECONDS) -> AsyncIterator[RunEvent]:
    """The run's events numbered above ``after``, in order, then each new one until the run
    ends (with its ``done`` or ``error`` event). A run live in this event loop is followed as
    it happens; one that another process or another loop runs is read from the store every
    ``poll`` seconds; one that is over (or interrupted) is read once."""
    if store.live.is_live_here(run_id):
        first = store.live.first_seq(run_id)
        if first is None or first > after + 1:  # a resumed run: its earlier events are stored
            for event in await store.run_events(run_id, after=after):
                if first is not None and event.seq >= first:
                    break
                after = event.seq
                yield event
        async for event in store.live.watch(run_id, after=after):
            yield event
        return
    while True:
        running = (await store.get_run(run_id)).status in (RunStatus.RUNNING, RunStatus.QUEUED)
        for event in await store.run_events(run_id, after=after):
            after = event.seq
            yield event
        if not running:
            return
        await asyncio.sleep(poll)
