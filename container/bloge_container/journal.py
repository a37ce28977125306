"""The event journal: built only when ``bloge.event-journal.enabled`` is true (on-property)
and its modules can be imported (on-class)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bloge_config import BlogeSettings
from bloge_container.components import ProjectDir, journal_available, secret_values
from bloge_container.report import ConditionsReport
from bloge_container.store import journal_sink

BRIDGE = "AgentEventJournalBridge"


def event_journal(settings: BlogeSettings, project: ProjectDir, report: ConditionsReport,
                  closables: list[Any]) -> Any:
    """The journal the settings ask for, or ``None`` (with the reason in the report): with
    the run store as its sink, each recorded run's callbacks are its events, redacted as the
    journal's (:func:`bloge.store.events.callback_events`)."""
    section = settings.event_journal
    if not section.enabled:
        report.record(BRIDGE, registered=False, kind="on-property",
                      reason="bloge.event-journal.enabled is false")
        return None
    sink = journal_sink(settings)
    if sink == "store":
        chosen = ("bloge.event-journal.sink is store" if section.sink == "store" else
                  "bloge.event-journal.sink is unset (store, while bloge.store is enabled)")
        report.record(BRIDGE, registered=True, kind="on-property",
                      reason=f"bloge.event-journal.enabled is true and {chosen}: on every "
                             "recorded run, every callback is recorded, redacted as the "
                             "journal's events, into the run store's events (bloge journal "
                             "show reads them there)")
        return None
    missing = journal_available()
    if missing is not None:
        report.record(BRIDGE, registered=False, kind="on-class",
                      reason=f"{missing} (pip install structlog)")
        return None
    from bloge.journal import EventJournal

    path = journal_path(settings, project)
    journal = EventJournal.open(sink, path=path)
    where = f"JSON lines appended to {path}" if sink == "file" else "events on stdout"
    closables.append(journal)
    report.record(BRIDGE, registered=True, kind="on-property",
                  reason=f"bloge.event-journal.enabled is true; {where}")
    return journal


def journal_path(settings: BlogeSettings, project: ProjectDir) -> Path:
    """``bloge.event-journal.path``, relative to the project directory."""
    path = Path(settings.event_journal.path)
    return path if path.is_absolute() else project.path / path


def journal_bridge(journal: Any, settings: BlogeSettings) -> Any:
    """The listener that records every agent callback in ``journal``."""
    if journal is None:
        return None
    from bloge.journal import AgentEventJournalBridge

    return AgentEventJournalBridge(journal, redact_keys=settings.event_journal.redact_keys,
                                   secrets=secret_values(settings))
