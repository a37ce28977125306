"""The journal's processor chain: the capture's expansion, its own links, and the chain.

An event is captured cheaply — a time, a name, records (dataclass instances) and extra
fields — and becomes an event dict only when the journal renders it, in a batch
(:class:`ProcessorChain`): the capture is expanded into the dict — ``event``, ``timestamp``,
the records' fields, the extra fields — as a structlog logger builds one from its context
and a call's arguments, and the dict then passes one chain of structlog processors:
``SequenceNumbers`` → the channel's processors (a :class:`~bloge.journal.redaction.Redactor`)
→ the sink's renderer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import keyword
import math
from collections.abc import Callable, Iterable
from types import FunctionType, MethodType
from typing import Any

from structlog import DropEvent
from structlog.typing import EventDict, Processor, WrappedLogger

#: A captured event: (channel, time, name, records, fields); the chain ignores the channel.
#: The time is in seconds since the epoch, as ``time.time()`` gives; the records are
#: dataclass instances whose fields become event fields.
Captured = tuple[Any, float, str, tuple[object, ...], dict[str, Any]]
#: Called with the name of an event that could not be rendered, and the error.
OnFailure = Callable[[str, Exception], None]


class ProcessorChain:
    """Renders captured events through structlog ``processors``, as a structlog logger
    runs its chain. Each event becomes its event dict: ``event``, ``timestamp`` (ISO-8601
    UTC, see :class:`IsoTimestamps`), the fields of each record in declaration order, then
    the extra fields. The dict passes every processor in turn, called with a logger
    (``None``: there is none), the method name ``"msg"`` and the dict, and a processor may
    drop it by raising ``structlog.DropEvent``. What the last one returns is the message the
    sink receives.

    A structlog ``BoundLogger`` would add, per event, a copy of its context and the
    translation of the result into a logger call's arguments: half a microsecond of the
    five an event may cost (measured), for nothing a sink uses. Expanding the capture here
    rather than in processors of its own saves as much again (three processor calls, and
    the capture's keys put into the dict only to be taken out).
    """

    __slots__ = ("processors", "stamps")

    def __init__(self, processors: Iterable[Processor], *,
                 stamps: IsoTimestamps | None = None) -> None:
        self.processors = [_direct(processor) for processor in processors]
        self.stamps = stamps if stamps is not None else IsoTimestamps()

    def __repr__(self) -> str:
        return f"ProcessorChain({self.processors!r})"

    def render(self, batch: Iterable[Captured], out: list[Any], failed: OnFailure) -> None:
        """Appends the message of each event of ``batch`` to ``out``, in order. An event a
        processor drops is skipped; one that cannot be rendered is passed to ``failed`` and
        skipped."""
        processors = self.processors
        stamp = self.stamps.stamp
        append = out.append
        for _, at, event, records, fields in batch:
            event_dict: Any = {"event": event, "timestamp": stamp(at)}
            try:
                for record in records:
                    try:
                        read = _readers[type(record)]
                    except KeyError:
                        read = _reader_of(type(record))
                    read(record, event_dict)
                if fields:
                    event_dict.update(fields)
                for processor in processors:
                    event_dict = processor(None, "msg", event_dict)
            except DropEvent:
                continue
            except Exception as exc:  # noqa: BLE001 -- a processor or value we do not control
                failed(event, exc)
                continue
            append(event_dict)


def _direct(processor: Processor) -> Processor:
    """``processor``, or the bound ``__call__`` of an instance whose class defines one: the
    same call, without CPython's dispatch of a call on an instance (170 ns a call against
    50 ns on CPython 3.11, measured; a chain makes several such calls per event)."""
    call = inspect.getattr_static(type(processor), "__call__", None)
    return MethodType(call, processor) if isinstance(call, FunctionType) else processor


class IsoTimestamps:
    """Formats event times: ISO-8601 UTC with microseconds and a ``Z`` suffix.

    The time is the one taken when the event happened, not when it is rendered (structlog's
    ``TimeStamper`` stamps the render time, and drops the microseconds when they are 0).
    """

    __slots__ = ("_prefix", "_second")

    def __init__(self) -> None:
        self._second = math.inf  # the second the prefix is of, as a float
        self._prefix = ""

    def stamp(self, at: float) -> str:
        """``at`` (seconds since the epoch) as ``2026-12-01T16:40:00.123456Z``."""
        offset = at - self._second
        # Events come in bursts: the date and time part is formatted once per second. (A
        # float comparison, not int(at): it costs a third as much, on every event.)
        if not 0.0 <= offset < 1.0:
            second = math.floor(at)
            moment = dt.datetime.fromtimestamp(second, dt.UTC)
            self._prefix = moment.strftime("%Y-%m-%dT%H:%M:%S.")
            self._second = float(second)
            offset = at - second
        # zfill rather than a format spec: half the time (measured), on every event.
        return f"{self._prefix}{str(int(offset * 1e6)).zfill(6)}Z"


#: Copies the fields of a record into an event dict.
Reader = Callable[[Any, dict[str, Any]], None]
#: The reader of each record class met so far.
_readers: dict[type, Reader] = {}


def _reader_of(cls: type) -> Reader:
    """The reader of the dataclass ``cls``, remembered (``TypeError`` if it is not one): a
    function that sets ``into[name] = record.name`` for each field, in declaration order.

    It is generated from the field list, as :mod:`dataclasses` generates ``__init__`` and
    ``__eq__``: an attribute read in bytecode is what CPython 3.11 does fastest (49
    instructions for a slot, against 608 for ``getattr(record, name)`` and 260 for
    ``attrgetter``, whose tuple then costs more to put into the dict than it saved; counted
    with callgrind), and a journal reads some ten fields per event. A field name that is not
    a plain identifier — dataclasses allow none, but a class can be built by hand — is read
    with ``getattr``.
    """
    names = tuple(field.name for field in dataclasses.fields(cls))
    if all(name.isidentifier() and not keyword.iskeyword(name) for name in names):
        lines = [f"    into[{name!r}] = record.{name}" for name in names] or ["    pass"]
        source = "def read(record, into):\n" + "\n".join(lines) + "\n"
        namespace: dict[str, Any] = {}
        # The source holds only the field names, checked above: nothing else is executed.
        exec(compile(source, f"<journal reader of {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 -- see above
        read: Reader = namespace["read"]
        read.__qualname__ = f"_reader_of.<{cls.__qualname__}>"
    else:
        def read(record: Any, into: dict[str, Any]) -> None:
            for name in names:
                into[name] = getattr(record, name)
    _readers[cls] = read
    return read


class SequenceNumbers:
    """Numbers the events of each execution: ``seq`` is 1, 2, 3… per ``execution_id``.

    The journal renders events in the order they were emitted, so ``seq`` is that order.
    Only the counters of the ``capacity`` most recently active executions are kept: an
    execution that stays idle while that many others emit would start again at 1.
    """

    __slots__ = ("_capacity", "_counters")

    def __init__(self, *, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._counters: dict[Any, int] = {}

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        try:
            execution_id = event_dict["execution_id"]
        except KeyError:
            return event_dict
        if execution_id is None:
            return event_dict
        counters = self._counters
        # pop and re-insert: dicts keep insertion order, so the first key is the least recent.
        seq = event_dict["seq"] = counters.pop(execution_id, 0) + 1
        counters[execution_id] = seq
        if seq == 1 and len(counters) > self._capacity:
            del counters[next(iter(counters))]
        return event_dict
