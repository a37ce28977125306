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
    from bloge.core.masking import SENSITIVE_FRAGMENTS as SENSITIVE_FRAGMENTS
    from bloge.core.masking import SENSITIVE_NAMES as SENSITIVE_NAMES
    from bloge.journal.bridge import AgentEventJournalBridge as AgentEventJournalBridge
    from bloge.journal.journal import EventJournal as EventJournal
    from bloge.journal.reading import BadLine as BadLine
    from bloge.journal.reading import JournalNotFoundError as JournalNotFoundError
    from bloge.journal.reading import read_journal as read_journal
    from bloge.journal.redaction import REDACTED as REDACTED
    from bloge.journal.redaction import Redactor as Redactor
    from bloge.journal.sinks import FileSink as FileSink
    from bloge.journal.sinks import Sink as Sink
    from bloge.journal.sinks import StreamSink as StreamSink
    from bloge.journal.testing import InMemorySink as InMemorySink
    from bloge.journal.timeline import AmbiguousExecutionError as AmbiguousExecutionError
    from bloge.journal.timeline import TimelineEntry as TimelineEntry
    from bloge.journal.timeline import UnknownExecutionError as UnknownExecutionError
    from bloge.journal.timeline import execution_timeline as execution_timeline
    from bloge.journal.timeline import known_executions as known_executions
    from bloge.journal.timeline import render_timeline as render_timeline
    from bloge.journal.timeline import resolve_execution_id as resolve_execution_id
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
