"""Sinks: where rendered journal events go, and the form they take there.

A sink names its renderer — the last link of the journal's processor chain — and takes the
rendered events in batches, in order. The journal serializes calls to a sink, so a sink
needs no lock of its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from bloge.core.codec import finite_json


class Sink(Protocol):
    """Receives rendered events; ``renderer`` is the processor that renders them for it."""

    renderer: Processor

    def write(self, messages: Sequence[Any]) -> None:
        """Write ``messages`` (what ``renderer`` returned, in order) and push them out."""

    def close(self) -> None:
        """Release the destination; later writes are errors."""


class JsonLines:
    """The renderer of JSON-lines sinks: an event dict becomes one compact JSON object.

    UTF-8 ``bytes`` by default; with ``ascii_only``, a ``str`` holding only ASCII (other
    characters as ``\\uXXXX`` escapes). Encoded by orjson. Values JSON has no form for are
    written as their ``repr``; NaN and infinities as ``null``. What orjson refuses —
    integers beyond 64 bits, lone surrogates — is encoded by the standard library instead
    (a lone surrogate becomes its ``\\uXXXX`` escape). Keys that are not strings must be
    ``int``, ``float``, ``bool`` or ``None``.

    Used as a structlog processor, it is the last link of a chain.
    """

    __slots__ = ("ascii_only",)

    def __init__(self, *, ascii_only: bool = False) -> None:
        self.ascii_only = ascii_only

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> Any:
        """``event_dict`` as compact JSON text: ``bytes`` (UTF-8), or ``str`` when ASCII-only."""
        line = _encode(event_dict)
        if not self.ascii_only:
            return line
        text = line.decode("utf-8")
        return text if text.isascii() else _NON_ASCII.sub(_escape, text)

    def __repr__(self) -> str:
        return f"JsonLines(ascii_only={self.ascii_only})"


def _encode(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, keys that are not strings included; through the
    standard library when orjson refuses it (integers beyond 64 bits, lone surrogates)."""
    try:
        return orjson.dumps(value, default=repr, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return _encode_exactly(finite_json(value)).encode("utf-8", "backslashreplace")


# One prebuilt encoder: json.dumps with options builds a new one per call.
_encode_exactly = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode
# Outside strings, JSON text is ASCII: every other character is inside a string.
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}"


def console_renderer(*, colors: bool) -> Processor:
    """structlog's ConsoleRenderer, keeping the journal's key order."""
    return structlog.dev.ConsoleRenderer(colors=colors, sort_keys=False)


class FileSink:
    """JSON lines appended to a UTF-8 file, handed to the OS after every batch.

    The parent folders are created. Each batch is one ``write`` system call on an
    unbuffered file, so the lines of a batch reach the file together. Before each batch the
    sink checks, with one ``stat``, that ``path`` still names the file it has open: a file
    deleted or moved away (by logrotate, say) is let go and ``path`` opened again — created
    if need be — so that the journal goes on where its readers look for it.

    A path that cannot be opened (a read-only folder, a path under a file) is no error when
    the sink is made: the first write tries again and raises the ``OSError``, which the
    journal reports once, without breaking the run that emits.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.renderer: Processor = JsonLines()
        self._file: io.FileIO | None = None
        self._identity = (0, 0)  # (st_dev, st_ino) of the open file
        self._closed = False
        with contextlib.suppress(OSError):  # the first write tries again, and reports it
            self._open()

    def __repr__(self) -> str:
        return f"FileSink({str(self.path)!r})"

    def write(self, messages: Sequence[Any]) -> None:
        file = self._current()
        data = memoryview(b"\n".join(messages) + b"\n")
        while data:  # a raw write may take part of the buffer (signals, pipes, quotas)
            written = file.write(data)
            if not written:
                raise OSError(f"could not write to {self.path}")
            data = data[written:]

    def close(self) -> None:
        self._closed = True
        if self._file is not None:
            self._file.close()
            self._file = None

    def _current(self) -> io.FileIO:
        """The open file ``path`` names now, opened again if it was deleted or replaced."""
        if self._closed:
            raise ValueError(f"{self!r} is closed")
        if self._file is not None:
            if self._still_named():
                return self._file
            self._file.close()
            self._file = None
        return self._open()

    def _still_named(self) -> bool:
        try:
            found = self.path.stat()
        except OSError:  # gone, or its folder is
            return False
        return (found.st_dev, found.st_ino) == self._identity

    def _open(self) -> io.FileIO:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            file = io.FileIO(self.path, "ab")
        except OSError as exc:  # "File exists" alone would not say which file was wanted
            raise OSError(exc.errno, f"cannot open the event journal {self.path}: "
                                     f"{exc.strerror}", exc.filename) from exc
        opened = os.fstat(file.fileno())
        self._identity = (opened.st_dev, opened.st_ino)
        self._file = file
        return file


class StreamSink:
    """Events written to a text stream (standard output unless given).

    ``console`` picks readable console lines (True) or JSON lines (False); ``None`` means
    console lines exactly when the stream is a terminal. Colours only on a terminal. JSON
    lines are ASCII-only here, since a stream's encoding is not ours to choose.
    """

    def __init__(self, stream: TextIO | None = None, *, console: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        tty = _isatty(self.stream)
        self.console = tty if console is None else console
        self.renderer = (console_renderer(colors=tty) if self.console
                         else JsonLines(ascii_only=True))

    def __repr__(self) -> str:
        kind = "console" if self.console else "json"
        return f"StreamSink({self.stream!r}, {kind})"

    def write(self, messages: Sequence[Any]) -> None:
        text = "\n".join(messages) + "\n"
        try:
            self.stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self.stream, "encoding", None) or "ascii"
            self.stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
        self.stream.flush()

    def close(self) -> None:
        """Flushes; the stream belongs to the caller and stays open."""
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
