"""The run store: on unless ``bloge.store.enabled`` is false (on-property), a SQLite file
under the project by default."""

from __future__ import annotations

import importlib.util
from typing import Any, Literal

from bloge_config import BlogeSettings
from bloge_container.components import ProjectDir, secret_values
from bloge_container.errors import ConfigurationError
from bloge_container.report import ConditionsReport

COMPONENT = "RunStore"


def run_store(settings: BlogeSettings, project: ProjectDir, report: ConditionsReport,
              closables: list[Any], tracing: Any = None, call_journal: Any = None) -> Any:
    """The store the settings ask for, or ``None`` (with the reason in the report); it
    traces its runs with ``tracing`` when given, and tells ``call_journal`` (a journal of
    its own, not the store) the events of the calls paused runs wait on."""
    section = settings.store
    if not section.enabled:
        report.record(COMPONENT, registered=False, kind="on-property",
                      reason="bloge.store.enabled is false: runs are not recorded")
        return None
    store = opened(settings, project)
    store.tracing = tracing
    store.call_journal = call_journal
    closables.append(store)
    report.record(COMPONENT, registered=True, kind="on-property",
                  reason=f"bloge.store.url is {store.url}; every run is recorded there")
    return store


def opened(settings: BlogeSettings, project: ProjectDir) -> Any:
    """A store for ``bloge.store`` (enabled or not), opened afresh."""
    from bloge.store import masked, open_store

    section = settings.store
    if section.url.startswith("postgres") and importlib.util.find_spec("psycopg") is None:
        raise ConfigurationError(
            f"bloge.store.url is {masked(section.url)!r}, a PostgreSQL store, but psycopg is "
            "not installed: pip install 'bloge[postgres]'")
    store = open_store(section.url, base_dir=project.path, auto_migrate=section.auto_migrate,
                       lease=section.lease, busy_timeout=section.busy_timeout,
                       redact_keys=settings.event_journal.redact_keys,
                       secrets=secret_values(settings))
    store.approval_expiry = settings.approvals.expiry
    store.tool_results_expiry = settings.approvals.tool_results_expiry
    return store


def journal_sink(settings: BlogeSettings) -> Literal["store", "file", "stdout"]:
    """Where the journal goes: ``bloge.event-journal.sink``, else the store while it is
    enabled, else the file."""
    sink = settings.event_journal.sink
    if sink is not None:
        return sink
    return "store" if settings.store.enabled else "file"
