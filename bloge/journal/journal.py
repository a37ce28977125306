"""``EventJournal``: structured events through a structlog processor chain into a sink.

Emitting is cheap and never fails: the event is captured as a tuple (time, name, records,
fields) and queued. Queued events are rendered through the journal's one structlog chain
(:class:`~bloge.journal.chain.ProcessorChain`; structlog's global configuration is never
touched) and written in the order they were emitted, in two steps:

- **rendered** inside an event loop at the end of the current burst (``loop.call_soon``),
  that is at the next await of the code emitting them. The code then usually waits for I/O
  — a model's answer, a tool's — and the rendering takes the time of that wait, not of the
  run;
- **written** ``flush_interval`` seconds after the first of them was rendered
  (``loop.call_later``), or with it when the interval is 0. Files and streams wait
  :data:`WRITE_INTERVAL` (10 ms) by default: a write and a ``stat`` then serve many turns of
  many runs instead of one burst each;
- outside an event loop, both at once;
- whenever ``max_batch`` events are waiting, on ``flush()``, on ``close()``, and when the
  interpreter exits (as the ``logging`` module flushes its handlers).

The agent bridge flushes when a run ends, so a finished run's events are always written.

Failures never reach the code that emits. The first failure of each kind is reported as a
warning on the ``bloge.journal`` logger: an event that cannot be rendered is dropped and the
next ones are still written; a sink that fails to write (full disk, closed file, a path
that cannot be opened) is given up — its batch and every later event are dropped, and
``failure`` holds the error. The file sink itself survives a journal file deleted or rotated
mid-run: it opens the path again.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import weakref
from collections import deque
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, TextIO

from structlog.typing import Processor

from bloge.core.errors import BlogeUsageError
from bloge.journal.chain import Captured, IsoTimestamps, ProcessorChain, SequenceNumbers
from bloge.journal.redaction import Redactor
from bloge.journal.sinks import FileSink, Sink, StreamSink
from bloge.journal.testing import InMemorySink

_log = logging.getLogger("bloge.journal")

_channel_of = itemgetter(0)

#: How long files and streams let rendered events gather before writing them, in seconds.
WRITE_INTERVAL = 0.01


class EventJournal:
    """A journal of structured events written to ``sink`` (see the module docs).

    Each event becomes a dict of ``event``, ``timestamp`` and the fields of its records and
    ``fields``, which passes this chain: ``SequenceNumbers`` (``seq`` per ``execution_id``), the
    channel's processors (by default a :class:`Redactor` with the built-in sensitive keys),
    then the sink's renderer. The field names ``event``, ``timestamp`` and ``seq`` are the
    journal's own. Safe to use from several threads and tasks. Call :meth:`close` at
    shutdown: events still queued are written then.
    """

    def __init__(self, sink: Sink, *, max_batch: int = 256, flush_interval: float = 0.0) -> None:
        if max_batch < 1:
            raise BlogeUsageError(f"max_batch must be at least 1, got {max_batch}")
        if not flush_interval >= 0:
            raise BlogeUsageError(f"flush_interval must be 0 or more seconds, got {flush_interval}")
        self.sink = sink
        self.max_batch = max_batch
        self.flush_interval = flush_interval
        self.failure: Exception | None = None
        self._closed = False
        # Emitting appends to the deque (atomic, no lock); rendering and writing hold the lock.
        self._pending: deque[Captured] = deque()
        #: Messages rendered and not yet written, in order.
        self._rendered: list[Any] = []
        self._lock = threading.Lock()
        self._reported: set[str] = set()
        self._reports: list[str] = []
        #: The event loops a render and a write are scheduled on, if any.
        self._render_loop: asyncio.AbstractEventLoop | None = None
        self._write_loop: asyncio.AbstractEventLoop | None = None
        self._stamps = IsoTimestamps()
        self._sequence = SequenceNumbers()
        self._default = self.channel(Redactor())
        _open_journals.add(self)

    # -- construction

    @classmethod
    def to_file(cls, path: str | Path, *, max_batch: int = 256,
                flush_interval: float = WRITE_INTERVAL) -> EventJournal:
        """JSON lines appended to the UTF-8 file ``path`` (its folders are created, and the
        file is opened again if it is deleted or rotated). Never raises: a path that cannot
        be opened is reported when the first events are written."""
        return cls(FileSink(path), max_batch=max_batch, flush_interval=flush_interval)

    @classmethod
    def to_stdout(
        cls, stream: TextIO | None = None, *, console: bool | None = None, max_batch: int = 256,
        flush_interval: float = WRITE_INTERVAL,
    ) -> EventJournal:
        """Events on ``stream`` (standard output by default): readable console lines when it
        is a terminal, JSON lines otherwise; ``console`` forces one or the other."""
        return cls(StreamSink(stream, console=console), max_batch=max_batch,
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

    def channel(self, *processors: Processor) -> JournalChannel:
        """A way in whose events also pass ``processors`` (e.g. a configured
        :class:`Redactor`) before rendering; channels share the queue, order and sink."""
        links: list[Processor] = [self._sequence, *processors, self.sink.renderer]
        return JournalChannel(self, ProcessorChain(links, stamps=self._stamps))

    # -- use

    def emit(self, event: str, /, *records: object, **fields: Any) -> None:
        """Record ``event`` with the fields of ``records`` (dataclass instances) and
        ``fields``; sensitive keys are redacted. Never raises. Values are rendered later:
        do not change a container after emitting it."""
        self._default.emit(event, *records, **fields)

    def flush(self) -> None:
        """Render and write every queued event now."""
        with self._lock:
            self._render_queued()
            self._write_rendered()
        self._send_reports()

    def close(self) -> None:
        """Flush and close the sink; events emitted later are dropped (reported once)."""
        self.flush()
        with self._lock:
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

    # -- internals

    def _queued(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Called after an event joined the queue from ``loop`` (``None`` outside an event
        loop) when no render is scheduled there, or when ``max_batch`` events are waiting."""
        if loop is None or len(self._pending) >= self.max_batch:
            self.flush()
        elif self._render_loop is not loop:
            # One scheduled render per loop at a time: code that never yields would otherwise
            # pile up a callback per event.
            self._render_loop = loop
            loop.call_soon(self._scheduled_render, loop)

    def _scheduled_render(self, loop: asyncio.AbstractEventLoop) -> None:
        # Cleared before rendering: an event emitted after the render took the queue
        # schedules the next one.
        self._render_loop = None
        with self._lock:
            self._render_queued()
            write_now = not self.flush_interval or len(self._rendered) >= self.max_batch
            if write_now:
                self._write_rendered()
            wait = bool(self._rendered) and self._write_loop is not loop
        if wait:
            self._write_loop = loop
            loop.call_later(self.flush_interval, self._scheduled_write)
        self._send_reports()

    def _scheduled_write(self) -> None:
        self._write_loop = None
        self.flush()  # what was queued since is rendered first: the order is kept

    def _render_queued(self) -> None:
        """Renders every queued event into ``_rendered``; the lock is held."""
        pending = self._pending
        if not pending:
            return
        popleft = pending.popleft
        # Only what is queued now: events other threads add meanwhile wait their turn.
        batch = [popleft() for _ in range(len(pending))]
        if self._closed:
            self._report("closed", f"{len(batch)} event(s) emitted after close() dropped")
            return
        if self.failure is not None:
            return
        for channel, captured in groupby(batch, _channel_of):
            channel._chain.render(captured, self._rendered, self._render_failed)

    def _write_rendered(self) -> None:
        """Writes what was rendered, in one batch; the lock is held."""
        messages = self._rendered
        if not messages:
            return
        self._rendered = []
        try:
            self.sink.write(messages)
        except Exception as exc:  # noqa: BLE001 -- a sink we do not control: OSError, ValueError, …
            self.failure = exc
            self._report("write", f"writing to {self.sink!r} failed; this and every later "
                                  "event are dropped", exc)

    def _render_failed(self, event: str, exc: Exception) -> None:
        self._report("render", f"event {event!r} could not be rendered; dropped", exc)

    def _report(self, kind: str, problem: str, exc: Exception | None = None) -> None:
        """Note the first problem of each kind; it is logged once the lock is released."""
        if kind in self._reported:
            return
        self._reported.add(kind)
        cause = f": {type(exc).__name__}: {exc}" if exc is not None else ""
        self._reports.append(f"event journal: {problem}{cause}")

    def _send_reports(self) -> None:
        # Logged outside the lock: a logging handler that emits journal events must not
        # deadlock.
        if not self._reports:
            return
        with self._lock:
            reports, self._reports = self._reports, []
        for report in reports:
            _log.warning("%s", report)


class JournalChannel:
    """Emits into its journal through the journal's chain plus the channel's processors."""

    __slots__ = ("_chain", "_journal", "_pending")

    def __init__(self, journal: EventJournal, chain: ProcessorChain) -> None:
        self._journal = journal
        self._pending = journal._pending
        self._chain = chain

    def emit(self, event: str, /, *records: object, **fields: Any) -> None:
        """See :meth:`EventJournal.emit`."""
        pending = self._pending
        pending.append((self, time.time(), event, records, fields))
        journal = self._journal
        # The bridge emits from inside the event loop, where get_running_loop() costs what
        # asyncio's private _get_running_loop() does (measured); outside a loop, its
        # RuntimeError (a third of a microsecond) comes with a flush that renders and
        # writes at once, which costs far more.
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or loop is not journal._render_loop or len(pending) >= journal.max_batch:
            journal._queued(loop)


#: Every journal not yet collected: what is still queued in them is written at exit.
_open_journals: weakref.WeakSet[EventJournal] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for journal in list(_open_journals):
        journal.flush()


def _start_afresh_after_fork() -> None:
    """In a forked child, every journal starts empty: what was queued or rendered at the
    fork is the parent's to write (the child would write it a second time), and a lock
    another thread of the parent held then would never be released in the child."""
    for journal in list(_open_journals):
        journal._lock = threading.Lock()
        journal._pending.clear()  # the channels hold this very deque
        journal._rendered = []
        journal._render_loop = journal._write_loop = None


os.register_at_fork(after_in_child=_start_afresh_after_fork)
