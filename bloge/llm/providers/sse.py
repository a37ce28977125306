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
    """Incremental decoder: :meth:`feed` it text as it arrives, then :meth:`close` it.

    Linear in the size of the stream, however the text is cut: the unfinished line is kept as
    a list of pieces and joined once, when its end arrives; each feed searches only its own
    text for line ends.
    """

    __slots__ = ("_after_cr", "_data", "_event", "_pieces")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._after_cr = False
        self._event = ""
        self._data: list[str] = []

    def feed(self, text: str) -> list[SseEvent]:
        """The events completed by ``text``; an unfinished line waits for the next feed."""
        if not text:
            return []
        if self._after_cr:
            # The last feed ended with "\r", already taken as a line end: a "\n" now is the
            # second half of that "\r\n", not a blank line.
            self._after_cr = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            self._after_cr = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        rest = lines.pop()
        if not lines:
            self._pieces.append(rest)
            return []
        if self._pieces:
            self._pieces.append(lines[0])
            lines[0] = "".join(self._pieces)
            self._pieces = []
        if rest:
            self._pieces.append(rest)
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
        pending, self._pieces = "".join(self._pieces), []
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
