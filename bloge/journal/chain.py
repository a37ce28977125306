"""The journal's own processor links, run on every event before redaction and rendering.

An event is captured cheaply — a time, a name, records (dataclass instances) and extra
fields — and becomes an event dict only when the journal renders it, through these links:
``IsoTimestamps`` → ``merge_records`` → ``SequenceNumbers``. The capture keys they consume,
:data:`AT`, :data:`RECORDS` and :data:`FIELDS`, never reach a sink.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from structlog.typing import EventDict, WrappedLogger

#: Capture key: the event's time (seconds since the epoch, as ``time.time()`` gives).
AT = "_at"
#: Capture key: a tuple of dataclass instances whose fields become event fields.
RECORDS = "_records"
#: Capture key: a dict of further event fields.
FIELDS = "_fields"


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
        event_dict["timestamp"] = self.format(event_dict.pop(AT))
        return event_dict

    def format(self, at: float) -> str:
        second = int(at)
        if second != self._second:
            # Events come in bursts: the date and time part is formatted once per second.
            moment = datetime.datetime.fromtimestamp(second, datetime.UTC)
            self._prefix = moment.strftime("%Y-%m-%dT%H:%M:%S.")
            self._second = second
        return f"{self._prefix}{int((at - second) * 1e6):06d}Z"


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
            event_dict["seq"] = self.next(execution_id)
        return event_dict

    def next(self, execution_id: object) -> int:
        """The next number of ``execution_id``."""
        counters = self._counters
        # pop and re-insert: dicts keep insertion order, so the first key is the least recent.
        seq = counters.pop(execution_id, 0) + 1
        counters[execution_id] = seq
        if len(counters) > self._capacity:
            del counters[next(iter(counters))]
        return seq
