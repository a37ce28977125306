"""Server-sent events, sans I/O: text in, complete events out.

Follows the WHATWG event-stream rules that chat APIs rely on: lines end with ``\\n``,
``\\r\\n`` or ``\\r``; ``data:`` lines accumulate until a blank line dispatches the event;
``event:`` names it; lines starting with ``:`` are comments (keep-alives).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its ``event`` name (``"message"`` when unnamed) and ``data``."""

    event: str
    data: str


class SseDecoder:
    """Incremental decoder: :meth:`feed` it text as it arrives, then :meth:`close` it."""

    __slots__ = ("_data", "_event", "_pending")

    def __init__(self) -> None:
        self._pending = ""
        self._event = ""
        self._data: list[str] = []

    def feed(self, text: str) -> list[SseEvent]:
        """The events completed by ``text``; an unfinished line waits for the next feed."""
        if not text:
            return []
        text = self._pending + text
        held = ""
        if "\r" in text:
            # A trailing "\r" may be the first half of a "\r\n" split across two reads.
            if text[-1] == "\r":
                text, held = text[:-1], "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        self._pending = lines.pop() + held
        events: list[SseEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SseEvent]:
        """The events left at the end of the stream.

        The standard drops an event that no blank line ended; we dispatch it, because some
        servers end the body right after their last ``data:`` line.
        """
        events: list[SseEvent] = []
        pending, self._pending = self._pending.rstrip("\r"), ""
        for line in (pending, ""):
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SseEvent(self._event or "message", "\n".join(self._data))
        self._event = ""
        self._data = []
        return event
