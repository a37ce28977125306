"""The event journal: structured events through a structlog chain into a sink.

```
EventJournal.emit(event, *records, **fields) ─▶ event dict (event, timestamp, fields)
AgentEventJournalBridge (one event per agent callback) ─▶ event dict
    event dict ─▶ SequenceNumbers ─▶ Redactor ─▶ sink's renderer ─▶ batch ─▶ Sink
read_journal(path) ─▶ execution_timeline(events, id) ─▶ render_timeline(entries)
```

Sinks: ``FileSink`` (JSON lines), ``StreamSink`` (console lines on a terminal, JSON lines
otherwise), the run store's events (:mod:`bloge.store.events`) and, for tests,
``bloge.journal.testing.InMemorySink`` (the event dicts).
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.core.masking import SENSITIVE_FRAGMENTS, SENSITIVE_NAMES
    from bloge.journal.bridge import AgentEventJournalBridge
    from bloge.journal.journal import EventJournal
    from bloge.journal.reading import BadLine, JournalNotFoundError, read_journal
    from bloge.journal.redaction import REDACTED, Redactor
    from bloge.journal.sinks import FileSink, Sink, StreamSink
    from bloge.journal.testing import InMemorySink
    from bloge.journal.timeline import (
        AmbiguousExecutionError,
        TimelineEntry,
        UnknownExecutionError,
        execution_timeline,
        known_executions,
        render_timeline,
        resolve_execution_id,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.core.masking": ["SENSITIVE_FRAGMENTS", "SENSITIVE_NAMES"],
        "bloge.journal.bridge": ["AgentEventJournalBridge"],
        "bloge.journal.journal": ["EventJournal"],
        "bloge.journal.reading": ["BadLine", "JournalNotFoundError", "read_journal"],
        "bloge.journal.redaction": ["REDACTED", "Redactor"],
        "bloge.journal.sinks": ["FileSink", "Sink", "StreamSink"],
        "bloge.journal.testing": ["InMemorySink"],
        "bloge.journal.timeline": [
            "AmbiguousExecutionError", "TimelineEntry", "UnknownExecutionError",
            "execution_timeline", "known_executions", "render_timeline", "resolve_execution_id",
        ],
    })

__all__ = [
    "REDACTED",
    "SENSITIVE_FRAGMENTS",
    "SENSITIVE_NAMES",
    "AgentEventJournalBridge",
    "AmbiguousExecutionError",
    "BadLine",
    "EventJournal",
    "FileSink",
    "InMemorySink",
    "JournalNotFoundError",
    "Redactor",
    "Sink",
    "StreamSink",
    "TimelineEntry",
    "UnknownExecutionError",
    "execution_timeline",
    "known_executions",
    "read_journal",
    "render_timeline",
    "resolve_execution_id",
]
