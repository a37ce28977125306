"""The journal's event dicts and the links of its chain that are its own.

An event becomes a plain dict — ``event``, ``timestamp``, then the fields of its records and
its extra fields (:func:`new_event`) — which passes the journal's chain of structlog
processors: :class:`SequenceNumbers` → :class:`~bloge.journal.redaction.Redactor` → the sink's
renderer.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type names only: stamping and dropping events needs no structlog
    from structlog.typing import EventDict, WrappedLogger

from bloge.journal.callbacks import record_fields

#: The journal's timestamps: ISO-8601 UTC, always with microseconds, and a ``Z``.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def new_event(event: str, records: tuple[object, ...], fields: dict[str, Any]) -> EventDict:
    """The event dict of ``event``: its name, the time now, the fields of each record (a
    dataclass instance) in declaration order, then ``fields``. ``TypeError`` when a record is
    not a dataclass instance."""
    stamped: EventDict = {"event": event,
                          "timestamp": dt.datetime.now(dt.UTC).strftime(TIMESTAMP_FORMAT)}
    for record in records:
        record_fields(stamped, record)
    stamped.update(fields)
    return stamped


class SequenceNumbers:
    """Numbers the events of each execution: ``seq`` is 1, 2, 3… per ``execution_id``.

    The journal runs its chain in the order events are logged, so ``seq`` is that order.
    Only the counters of the ``capacity`` most recently active executions are kept: an
    execution that stays idle while that many others log would start again at 1.
    """

    __slots__ = ("_capacity", "_counters")

    def __init__(self, *, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._counters: dict[Any, int] = {}

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        execution_id = event_dict.get("execution_id")
        if execution_id is None:
            return event_dict
        counters = self._counters
        # pop and re-insert: dicts keep insertion order, so the first key is the least recent.
        seq = event_dict["seq"] = counters.pop(execution_id, 0) + 1
        counters[execution_id] = seq
        if seq == 1 and len(counters) > self._capacity:
            del counters[next(iter(counters))]
        return event_dict
