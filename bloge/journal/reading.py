"""Reading a JSON-lines journal back, tolerant of a line cut short by a crash."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bloge.core.errors import BlogeUsageError

_log = logging.getLogger("bloge.journal")


class JournalNotFoundError(BlogeUsageError, FileNotFoundError):
    """There is no journal file where one was expected."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"no event journal at {path} (is bloge.event-journal enabled, "
                         f"with sink: file and this path?)")


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of the journal that is not a JSON object; ``last`` when it ends the file
    without a newline — most likely an event cut short while it was being written."""

    path: Path
    line_number: int
    reason: str
    last: bool

    def __str__(self) -> str:
        where = f"{self.path}:{self.line_number}"
        if self.last:
            return f"{where}: the last line is incomplete ({self.reason}); skipped"
        return f"{where}: not a journal event ({self.reason}); skipped"


def warn_bad_line(bad: BadLine) -> None:
    """The default ``on_bad_line``: a warning on the ``bloge.journal`` logger."""
    _log.warning("%s", bad)


def read_journal(
    path: str | Path, *, on_bad_line: Callable[[BadLine], None] = warn_bad_line
) -> Iterator[dict[str, Any]]:
    """The events of the JSON-lines journal at ``path``, in file order.

    A line that is not a JSON object (bad UTF-8 or JSON, a truncated last line) is skipped
    and passed to ``on_bad_line``; blank lines are ignored. Raises
    :class:`JournalNotFoundError` at once when there is no file.
    """
    path = Path(path)
    if not path.is_file():
        raise JournalNotFoundError(path)
    return _events(path, on_bad_line)


def _events(path: Path, on_bad_line: Callable[[BadLine], None]) -> Iterator[dict[str, Any]]:
    try:
        file = path.open("rb")
    except FileNotFoundError as exc:  # removed since read_journal looked
        raise JournalNotFoundError(path) from exc
    with file:
        for number, raw in enumerate(file, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
                on_bad_line(BadLine(path, number, _reason(exc), not raw.endswith(b"\n")))
                continue
            if not isinstance(event, dict):
                on_bad_line(BadLine(path, number, f"a JSON {type(event).__name__}, "
                                    "not an object", not raw.endswith(b"\n")))
                continue
            yield event


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc)
