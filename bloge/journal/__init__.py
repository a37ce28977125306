"""The event journal: structured events through a structlog chain into a sink.

```
EventJournal ──channel(processors)──▶ emit(event, *records, **fields)   capture: a tuple
    └─ batch ─▶ IsoTimestamps ─▶ merge_records ─▶ SequenceNumbers ─▶ Redactor ─▶ renderer ─▶ Sink
AgentEventJournalBridge: an AgentExecutionListener emitting one event per agent callback
```

Sinks: ``FileSink`` (JSON lines), ``StreamSink`` (console lines on a terminal, JSON lines
otherwise) and, for tests, ``bloge.journal.testing.InMemorySink`` (the event dicts).
"""

from bloge.journal.bridge import AgentEventJournalBridge
from bloge.journal.journal import EventJournal, JournalChannel
from bloge.journal.redaction import REDACTED, SENSITIVE_KEYS, Redactor
from bloge.journal.sinks import FileSink, Sink, StreamSink
from bloge.journal.testing import InMemorySink

__all__ = [
    "REDACTED",
    "SENSITIVE_KEYS",
    "AgentEventJournalBridge",
    "EventJournal",
    "FileSink",
    "InMemorySink",
    "JournalChannel",
    "Redactor",
    "Sink",
    "StreamSink",
]
