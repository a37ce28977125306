"""The journal's processor chain: its own links, and the chain that runs them.

An event is captured cheaply — a time, a name, records (dataclass instances) and extra
fields — and becomes an event dict only when the journal renders it, in a batch, through
one chain of structlog processors (:class:`ProcessorChain`): ``IsoTimestamps`` →
``merge_records`` → ``SequenceNumbers`` → the channel's processors (a
:class:`~bloge.journal.redaction.Redactor`) → the sink's renderer. The capture keys the
first links consume, :data:`AT`, :data:`RECORDS` and :data:`FIELDS`, never reach a sink.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
from collections.abc import Callable, Iterable
from types import FunctionType, MethodType
from typing import Any

from structlog import DropEvent
from structlog.typing import EventDict, Processor, WrappedLogger

#: Capture key: the event's time (seconds since the epoch, as ``time.time()`` gives).
AT = "_at"
#: Capture key: a tuple of dataclass instances whose fields become event fields.
RECORDS = "_records"
#: Capture key: a dict of further event fields.
FIELDS = "_fields"

#: A captured event: (channel, time, name, records, fields); the chain ignores the channel.
Captured = tuple[Any, float, str, tuple[object, ...], dict[str, Any]]
#: Called with the name of an event that could not be rendered, and the error.
OnFailure = Callable[[str, Exception], None]


class ProcessorChain:
    """Renders captured events through structlog ``processors``, as a structlog logger
    runs its chain: each event dict — ``event`` and the capture keys — passes every
    processor in turn, called with a logger (``None``: there is none), the method name
    ``"msg"`` and the dict, and a processor may drop it by raising ``structlog.DropEvent``.
    What the last one returns is the message the sink receives.

    A structlog ``BoundLogger`` would add, per event, a copy of its context and the
    translation of the result into a logger call's arguments: half a microsecond of the
    five an event may cost (measured), for nothing a sink uses.
    """

    __slots__ = ("processors",)

    def __init__(self, processors: Iterable[Processor]) -> None:
        self.processors = [_direct(processor) for processor in processors]

    def __repr__(self) -> str:
        return f"ProcessorChain({self.processors!r})"

    def render(self, batch: Iterable[Captured], out: list[Any], failed: OnFailure) -> None:
        """Appends the message of each event of ``batch`` to ``out``, in order. An event a
        processor drops is skipped; one that cannot be rendered is passed to ``failed`` and
        skipped."""
        processors = self.processors
        append = out.append
        for _, at, event, records, fields in batch:
            event_dict: Any = {AT: at, RECORDS: records, FIELDS: fields, "event": event}
            try:
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
    50 ns on CPython 3.11, measured; a chain makes four such calls per event)."""
    call = inspect.getattr_static(type(processor), "__call__", None)
    return MethodType(call, processor) if isinstance(call, FunctionType) else processor


class IsoTimestamps:
    """Replaces :data:`AT` by ``timestamp``: ISO-8601 UTC with microseconds, ``Z`` suffix.

    The time was taken when the event happened, not when it is rendered (structlog's
    ``TimeStamper`` stamps the render time, and drops the microseconds when they are 0).
    """

    __slots__ = ("_prefix", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        at = event_dict.pop(AT)
        second = int(at)
        if second != self._second:
            # Events come in bursts: the date and time part is formatted once per second.
            moment = dt.datetime.fromtimestamp(second, dt.UTC)
            self._prefix = moment.strftime("%Y-%m-%dT%H:%M:%S.")
            self._second = second
        event_dict["timestamp"] = f"{self._prefix}{int((at - second) * 1e6):06d}Z"
        return event_dict


_field_names: dict[type, tuple[str, ...]] = {}


def _names_of(cls: type) -> tuple[str, ...]:
    names = _field_names[cls] = tuple(field.name for field in dataclasses.fields(cls))
    return names


def merge_records(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """Replaces :data:`RECORDS` by the fields of each record, in declaration order, then
    :data:`FIELDS` by its items."""
    for record in event_dict.pop(RECORDS, ()):
        cls = type(record)
        names = _field_names.get(cls) or _names_of(cls)
        # A plain loop of getattr beats attrgetter + zip + update here (measured).
        for name in names:
            event_dict[name] = getattr(record, name)
    fields = event_dict.pop(FIELDS, None)
    if fields:
        event_dict.update(fields)
    return event_dict


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
        execution_id = event_dict.get("execution_id")
        if execution_id is not None:
            counters = self._counters
            # pop and re-insert: dicts keep insertion order, so the first key is the least
            # recent.
            seq = event_dict["seq"] = counters.pop(execution_id, 0) + 1
            counters[execution_id] = seq
            if len(counters) > self._capacity:
                del counters[next(iter(counters))]
        return event_dict
