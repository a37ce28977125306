"""Paused runs whose waiting calls expired, continued by the server.

A call that waits expires (``bloge.approvals.expiry`` for an approval,
``bloge.approvals.tool-results-expiry`` for an external call): it then counts as denied, or
the model is told no result came, and the run goes on. Nothing else may ever continue such a
run — a ``/v1`` client that went away never posts its tools' results — so every
:data:`CHECK_SECONDS` the server continues the paused runs that can go on only because a call
of theirs expired (:func:`bloge.store.expired_runs`), each in a task of its own, as their
owner, as the last decision would. With several servers on one store, each looks; a run
one of them took back is not taken again (the others' attempt is a conflict, logged). A
Temporal run's workflow has its own timer, and goes on by itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from bloge.core.repeating import repeating
from bloge.server.approvals_api import continue_run
from bloge.server.state import ServerState
from bloge.store import expired_runs

#: How often the server looks for paused runs whose calls expired, in seconds.
CHECK_SECONDS = 30.0
_log = logging.getLogger("bloge.server")


async def continue_expired(state: ServerState) -> list[str]:
    """Continue the paused runs that can go on only because a call of theirs expired; the
    ids of those continued here."""
    continued = []
    for run_id, owner in await expired_runs(state.store):
        started = await continue_run(state, run_id, owner)  # or the caller it goes on in
        if started is not None:
            continued.append(started)
    return continued


@contextlib.asynccontextmanager
async def continuing_expired(state: ServerState, *,
                             every: float = CHECK_SECONDS) -> AsyncIterator[None]:
    """While the body runs, :func:`continue_expired` every ``every`` seconds."""

    async def check() -> None:
        try:
            await continue_expired(state)
        except Exception:  # noqa: BLE001 -- the store's trouble must not stop the server
            _log.warning("could not continue the runs whose calls expired", exc_info=True)

    async with repeating(every, check):
        yield
