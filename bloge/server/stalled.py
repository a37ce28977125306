"""Paused runs that can go on but that nothing else continues, continued by the server.

A paused run goes on once no call of its round waits any more. Mostly, the answer that ends
the wait continues it: the last decision or result posted over HTTP, ``bloge approvals
approve``, a ``/v1`` client's results. Some are left paused, for a server to continue: decided
with ``--no-continue``, or whose continuation was refused a task (at the server's limit).
And a call that waits expires (``bloge.approvals.expiry`` for an approval,
``bloge.approvals.tool-results-expiry`` for an external call): it then counts as denied, or
the model is told no result came — but nothing else ever continues such a run (a ``/v1``
client that went away never posts its tools' results). So every :data:`CHECK_SECONDS` the
server continues those runs (:func:`bloge.store.stalled_runs`; one answered less than
:data:`SETTLED_SECONDS` ago is left to its answer's own continuation), each in a task of its
own, as their owner, as the last decision would. With several servers on one store, each
looks; a run one of them took back is not taken again (the others' attempt is a conflict,
logged). A Temporal run's workflow has its own timer for expiries, and goes on by itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from bloge.core.repeating import repeating
from bloge.server.approvals_api import continue_run
from bloge.server.state import ServerState
from bloge.store import stalled_runs

#: How often the server looks for paused runs that nothing else continues, in seconds.
CHECK_SECONDS = 30.0
#: How long a run whose calls are all answered is left to its answer's own continuation
#: (``bloge approvals approve`` resumes it in its own process), in seconds.
SETTLED_SECONDS = 30.0
_log = logging.getLogger("bloge.server")


async def continue_stalled(state: ServerState, *,
                           settled: float = SETTLED_SECONDS) -> list[str]:
    """Continue the paused runs that can go on but that nothing else continues (those
    answered at least ``settled`` seconds ago, and those whose calls expired); the ids of
    those continued here."""
    continued = []
    for run_id, owner in await stalled_runs(state.store, settled=settled):
        started = await continue_run(state, run_id, owner)  # or the caller it goes on in
        if started is not None:
            continued.append(started)
    return continued


@contextlib.asynccontextmanager
async def continuing_stalled(state: ServerState, *,
                             every: float = CHECK_SECONDS) -> AsyncIterator[None]:
    """While the body runs, :func:`continue_stalled` every ``every`` seconds."""

    async def check() -> None:
        try:
            await continue_stalled(state)
        except Exception:  # noqa: BLE001 -- the store's trouble must not stop the server
            _log.warning("could not continue the paused runs that can go on", exc_info=True)

    async with repeating(every, check):
        yield
