"""The events of the calls paused runs wait on, told to a journal outside the store.

A call that waits is requested, decided, given its result or expires in the run store's
events (``approval_required``, ``approval_decided``, ``approval_expired``,
``tool_results_required``, ``tool_results_posted``, ``tool_results_expired``, and
``subagent_paused`` for a call waiting on a sub-agent's paused run), written by
whoever takes that step: the run's recorder (a local run's, a Temporal worker's) or the
decider (HTTP, ``bloge approvals``, ``agent.resume``, a ``/v1`` client). Each write tells the
store's :attr:`~bloge.store.Store.call_journal`, if it has one, of those events once they are
committed (:func:`told`): the one link between the store and a journal that keeps its own
file (``bloge.event-journal.sink: file`` or ``stdout``), so that an event is told once, by
the process that wrote it. A journal whose sink is the store reads them there already.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from bloge.store.records import RunEvent

#: The run events of the calls paused runs wait on.
CALL_EVENTS = frozenset({"approval_required", "approval_decided", "approval_expired",
                         "tool_results_required", "tool_results_posted",
                         "tool_results_expired", "subagent_paused"})
_log = logging.getLogger("bloge.store")


class CallJournal(Protocol):
    """Where the events of waiting calls go besides the store
    (:class:`~bloge.journal.AgentEventJournalBridge` is one)."""

    def record_call_event(self, kind: str, run_id: str, body: Mapping[str, Any]) -> None:
        """One event of ``kind`` of run ``run_id``, its ``body`` as stored (arguments
        masked); never raises."""
        ...


def told(journal: CallJournal | None, events: Iterable[RunEvent]) -> None:
    """Tell ``journal`` of the call events among ``events``, which are committed."""
    if journal is None:
        return
    for event in events:
        if event.type in CALL_EVENTS:
            try:
                journal.record_call_event(event.type, event.run_id, event.body)
            except Exception:  # noqa: BLE001 -- the journal's trouble must not undo a decision
                _log.warning("could not journal event %s of run %s", event.type,
                             event.run_id, exc_info=True)
