"""Test doubles shipped with the library: a sink that keeps the event dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type names only: the test sink needs no structlog
    from structlog.typing import EventDict, Processor, WrappedLogger


def keep_event_dict(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """The renderer of sinks that keep event dicts: the dict itself is the message."""
    return event_dict


class InMemorySink:
    """Keeps every event as the dict the journal's chain produced (redacted, unrendered).

    ``EventJournal(InMemorySink(), max_batch=1)`` — or ``EventJournal.in_memory()`` — makes
    every event visible in ``events`` as soon as it is emitted.
    """

    def __init__(self) -> None:
        self.renderer: Processor = keep_event_dict
        self.events: list[dict[str, Any]] = []
        self.closed = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.events)} events)"

    def write(self, messages: Sequence[Any]) -> None:
        if self.closed:
            raise ValueError("write to a closed InMemorySink")
        self.events.extend(messages)

    def close(self) -> None:
        self.closed = True

    def named(self, event: str) -> list[dict[str, Any]]:
        """The events called ``event``, in order."""
        return [e for e in self.events if e.get("event") == event]
