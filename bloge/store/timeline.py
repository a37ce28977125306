"""A run's events as journal events: what ``bloge journal show`` and ``bloge runs show`` print,
the same timeline whether the journal went to a file or to the store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from bloge.journal import TimelineEntry, execution_timeline
from bloge.store.call_journal import CALL_EVENTS
from bloge.store.records import RunEvent

#: The events shown in a run's timeline beside the callbacks (whose on_agent_loop_exited
#: tells each end of the run, a paused or failed one too): the calls it waited on.
TIMELINE_EVENTS = CALL_EVENTS


def journal_events(events: Iterable[RunEvent]) -> list[dict[str, Any]]:
    """The listener callbacks among ``events``, and the events of the calls a paused run
    waited on (:data:`TIMELINE_EVENTS`), in the journal's event form
    (``event``, ``timestamp``, ``seq``, ``execution_id``, then the payload's fields). Stream
    chunks are left out: the journal records callbacks."""
    return [
        {"event": event.type, "timestamp": _iso(event.at), "seq": event.seq,
         "execution_id": event.run_id, **event.body}
        for event in events
        if event.type.startswith("on_agent_") or event.type in TIMELINE_EVENTS
    ]


def run_timeline(run_id: str, events: Iterable[RunEvent]) -> list[TimelineEntry]:
    """The timeline of the run's callbacks among ``events`` (none: an empty timeline)."""
    journal = journal_events(events)
    return execution_timeline(journal, run_id) if journal else []


def _iso(at: float) -> str:
    moment = dt.datetime.fromtimestamp(at, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
