"""``EventJournal``: event dicts through one structlog processor chain, written in batches.

Each event is a plain dict that passes the journal's chain at once, in the caller's thread:
``SequenceNumbers`` (``seq`` per ``execution_id``) → a :class:`Redactor` → the sink's renderer
(structlog's global configuration is never touched). The rendered messages gather in one
batch, which the journal writes to its sink — one writer, under one lock, in the order the
events were logged:

- with an event logged ``flush_interval`` seconds or more after the last write — at once
  when it is 0. Files and streams wait :data:`WRITE_INTERVAL` (10 ms): an event after a quiet
  spell is written at once, and those of a burst that follow it gather for the next write;
- when ``max_batch`` messages are waiting;
- on :meth:`EventJournal.flush` — the agent bridge flushes when a run ends, so a finished
  run's events are always written — and on :meth:`EventJournal.close`.

What is kept: on a normal close, everything. A process that dies without closing its journal
loses the batch not yet written: events of its running runs logged less than
``flush_interval`` after the last write, and since (during a long model call, say: a turn's
last events wait for the next event of any run, or the run's end).

Failures never reach the code that logs. The first failure of each kind is reported as a
warning on the ``bloge.journal`` logger: an event that cannot be rendered is dropped and the
next ones are still written; a sink that fails to write (full disk, closed file, a path
that cannot be opened) is given up — its batch and every later event are dropped, and
``failure`` holds the error.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TextIO

from bloge.core.errors import BlogeUsageError
from bloge.journal.chain import SequenceNumbers, new_event
from bloge.journal.redaction import Redactor
from bloge.journal.testing import InMemorySink

if TYPE_CHECKING:
    from structlog.typing import EventDict

    from bloge.journal.sinks import Sink

_log = logging.getLogger("bloge.journal")


def _dropped(exc: Exception) -> bool:
    """Whether a processor dropped the event (structlog's ``DropEvent``): one that raises it
    has loaded structlog, so a journal that nothing else made load it need not."""
    structlog = sys.modules.get("structlog")
    return structlog is not None and isinstance(exc, structlog.DropEvent)

#: How long files and streams let rendered events gather before writing them, in seconds.
WRITE_INTERVAL = 0.01


class EventJournal:
    """A journal of structured events written to ``sink`` (see the module docs).

    Events pass ``SequenceNumbers`` → ``redactor`` (by default a :class:`Redactor` with the
    built-in sensitive keys; :meth:`log` may name another) → the sink's renderer. The field
    names ``event``, ``timestamp`` and ``seq`` are the journal's own. Safe to use from several
    threads and tasks. Call :meth:`close` at shutdown: the batch still waiting is written then.
    """

    def __init__(self, sink: Sink, *, redactor: Redactor | None = None, max_batch: int = 256,
                 flush_interval: float = 0.0) -> None:
        if max_batch < 1:
            raise BlogeUsageError(f"max_batch must be at least 1, got {max_batch}")
        if not flush_interval >= 0:
            raise BlogeUsageError(f"flush_interval must be 0 or more seconds, got {flush_interval}")
        self.sink = sink
        self.redactor = redactor if redactor is not None else Redactor()
        self.max_batch = max_batch
        self.flush_interval = flush_interval
        self.failure: Exception | None = None
        self._closed = False
        self._sequence = SequenceNumbers()
        self._lock = threading.Lock()
        self._batch: list[Any] = []
        self._written_at = -math.inf  # time.monotonic() of the last write
        self._reported: set[str] = set()
        self._reports: list[str] = []

    # -- construction

    @classmethod
    def to_file(cls, path: str | Path, *, redactor: Redactor | None = None,
                max_batch: int = 256, flush_interval: float = WRITE_INTERVAL) -> EventJournal:
        """JSON lines appended to the UTF-8 file ``path`` (its folders are created, and the
        file is opened again if it is deleted or rotated). Never raises: a path that cannot
        be opened is reported when the first events are written."""
        from bloge.journal.sinks import FileSink  # noqa: PLC0415 -- structlog, for file sinks only

        return cls(FileSink(path), redactor=redactor, max_batch=max_batch,
                   flush_interval=flush_interval)

    @classmethod
    def to_stdout(
        cls, stream: TextIO | None = None, *, console: bool | None = None,
        redactor: Redactor | None = None, max_batch: int = 256,
        flush_interval: float = WRITE_INTERVAL,
    ) -> EventJournal:
        """Events on ``stream`` (standard output by default): readable console lines when it
        is a terminal, JSON lines otherwise; ``console`` forces one or the other."""
        from bloge.journal.sinks import StreamSink  # noqa: PLC0415 -- structlog, for streams only

        return cls(StreamSink(stream, console=console), redactor=redactor, max_batch=max_batch,
                   flush_interval=flush_interval)

    @classmethod
    def in_memory(cls) -> EventJournal:
        """Events kept as dicts in an :class:`~bloge.journal.testing.InMemorySink`
        (``journal.sink.events``), written at once."""
        return cls(InMemorySink(), max_batch=1)

    @classmethod
    def open(
        cls, sink: Literal["stdout", "file"], *, path: str | Path = "var/journal.jsonl"
    ) -> EventJournal:
        """The journal the ``event-journal`` settings describe: ``sink`` is ``"stdout"`` or
        ``"file"`` (then ``path`` is the file)."""
        if sink == "file":
            return cls.to_file(path)
        if sink == "stdout":
            return cls.to_stdout()
        raise BlogeUsageError(f"unknown event-journal sink {sink!r}; use 'stdout' or 'file'")

    # -- use

    def emit(self, event: str, /, *records: object, **fields: Any) -> None:
        """Log ``event`` with the fields of ``records`` (dataclass instances) and ``fields``
        (see :func:`~bloge.journal.chain.new_event`). Never raises."""
        try:
            logged = new_event(event, records, fields)
        except Exception as exc:  # noqa: BLE001 -- a record we do not control
            with self._lock:
                self._report("render", f"event {event!r} could not be rendered; dropped", exc)
            self._send_reports()
            return
        self.log(logged)

    def log(self, event_dict: EventDict, *, redactor: Redactor | None = None) -> None:
        """Pass ``event_dict`` through the chain, ``redactor`` standing for the journal's own
        when given, and add what the renderer returns to the batch. Never raises."""
        with self._lock:
            if self._closed:
                self._report("closed", "events logged after close() are dropped")
            elif self.failure is None:
                self._render(event_dict, redactor or self.redactor)
        self._send_reports()

    def flush(self) -> None:
        """Write the batch now."""
        with self._lock:
            self._write()
        self._send_reports()

    def close(self) -> None:
        """Flush and close the sink; events logged later are dropped (reported once)."""
        with self._lock:
            self._write()
            if not self._closed:
                self._closed = True
                try:
                    self.sink.close()
                except Exception as exc:  # noqa: BLE001 -- the owner's shutdown goes on regardless
                    self._report("close", f"closing {self.sink!r} failed", exc)
        self._send_reports()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventJournal({self.sink!r})"

    # -- internals; the lock is held

    def _render(self, event_dict: EventDict, redactor: Redactor) -> None:
        try:
            event_dict = self._sequence(None, "msg", event_dict)
            event_dict = redactor(None, "msg", event_dict)
            message = self.sink.renderer(None, "msg", event_dict)
        except Exception as exc:  # noqa: BLE001 -- a processor or value we do not control
            if _dropped(exc):
                return
            self._report("render", f"event {event_dict.get('event')!r} could not be rendered; "
                                   "dropped", exc)
            return
        self._batch.append(message)
        if (len(self._batch) >= self.max_batch
                or time.monotonic() - self._written_at >= self.flush_interval):
            self._write()

    def _write(self) -> None:
        batch = self._batch
        if not batch:
            return
        self._batch = []
        self._written_at = time.monotonic()
        try:
            self.sink.write(batch)
        except Exception as exc:  # noqa: BLE001 -- a sink we do not control: OSError, ValueError, …
            self.failure = exc
            self._report("write", f"writing to {self.sink!r} failed; this and every later "
                                  "event are dropped", exc)

    def _report(self, kind: str, problem: str, exc: Exception | None = None) -> None:
        """Note the first problem of each kind; it is logged once the lock is released."""
        if kind in self._reported:
            return
        self._reported.add(kind)
        cause = f": {type(exc).__name__}: {exc}" if exc is not None else ""
        self._reports.append(f"event journal: {problem}{cause}")

    def _send_reports(self) -> None:
        # Logged outside the lock: a logging handler that logs journal events must not
        # deadlock.
        if not self._reports:
            return
        with self._lock:
            reports, self._reports = self._reports, []
        for report in reports:
            _log.warning("%s", report)
