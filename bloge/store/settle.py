"""Waiting for a run's record to move on, read from the store again and again.

An answer that changes a run elsewhere — a cancel its worker hears within a second, a
decision its task or its workflow takes back a moment later — waits a little for the store
to show the change before it returns, so that whoever reads or follows the run right after
(``GET /runs/{id}``, ``GET /runs/{id}/stream``, on any server) sees it moved on: stopped, or
going on, rather than still running, or still paused and so already over for a stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bloge.store.records import Run
from bloge.store.store import Store


async def run_moved_on(store: Store, run: Run, still: Callable[[Run], bool], *,
                       within: float, every: float) -> Run:
    """``run`` read from ``store`` again every ``every`` seconds while ``still`` holds of
    it, at most ``within`` seconds: its last read (of which ``still`` may hold yet, when the
    time ran out)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + within
    while still(run) and loop.time() < give_up:
        await asyncio.sleep(every)
        run = await store.get_run(run.id)
    return run

