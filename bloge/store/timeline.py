"""A run's events as journal events: what ``bloge journal show`` and ``bloge runs show`` print,
the same timeline whether the journal went to a file or to the store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from bloge.journal import TimelineEntry, execution_timeline
from bloge.store.records import RunEvent

#: A paused run's events, shown in its timeline beside the callbacks.
PAUSE_EVENTS = frozenset({"approval_required", "approval_decided", "approval_expired",
                          "tool_results_required", "tool_results_posted"})


def journal_events(events: Iterable[RunEvent]) -> list[dict[str, Any]]:
    """The listener callbacks among ``events``, and the events of a paused run's decisions
    (:data:`PAUSE_EVENTS`), in the journal's event form (``event``, ``timestamp``, ``seq``,
    ``execution_id``, then the payload's fields). Stream chunks are left out: the journal
    records callbacks."""
    return [
        {"event": event.type, "timestamp": _iso(event.at), "seq": event.seq,
         "execution_id": event.run_id, **event.body}
        for event in events if event.type.startswith("on_agent_") or event.type in PAUSE_EVENTS
    ]


def run_timeline(run_id: str, events: Iterable[RunEvent]) -> list[TimelineEntry]:
    """The timeline of the run's callbacks among ``events`` (none: an empty timeline)."""
    journal = journal_events(events)
    return execution_timeline(journal, run_id) if journal else []


def _iso(at: float) -> str:
    moment = dt.datetime.fromtimestamp(at, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
