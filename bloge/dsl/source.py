"""``SourceText``: a DSL text with its file name, for locating errors."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from bloge.core.errors import DslError, DslSyntaxError
from bloge.dsl.syntax import Span

E = TypeVar("E", bound=DslError)

_BOM = b"\xef\xbb\xbf"


def decode_source(data: bytes, filename: str) -> str:
    """The DSL text of a file's bytes: UTF-8, a leading byte-order mark dropped (editors on
    Windows write one). Bytes that are not UTF-8 are a ``DslSyntaxError`` at the line and
    column of the first of them."""
    body = data.removeprefix(_BOM)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = body[: exc.start].decode("utf-8")
        line = before.count("\n") + 1
        start = before.rfind("\n") + 1
        end = body.find(b"\n", exc.start)
        rest = body[exc.start : end if end >= 0 else len(body)]
        shown = before[start:] + rest.decode("utf-8", errors="replace")
        raise DslSyntaxError(
            f"byte 0x{body[exc.start]:02x} is not UTF-8 ({exc.reason}); save the file as "
            "UTF-8", filename=filename, line=line, column=len(before) - start + 1,
            source_line=shown, width=1) from None


@dataclass(frozen=True, slots=True)
class SourceText:
    text: str
    filename: str = "<string>"
    _lines: list[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_lines", self.text.splitlines())

    def line(self, number: int) -> str | None:
        """The text of 1-based line ``number``, or ``None`` past the end."""
        if 1 <= number <= len(self._lines):
            return self._lines[number - 1]
        return None

    def error(
        self, kind: type[E], message: str, span: Span | None, *, width: int | None = None
    ) -> E:
        """A located error of ``kind`` pointing at ``span`` (the file's start when ``None``)."""
        line, column = (span.line, span.column) if span else (1, 1)
        return kind(
            message,
            filename=self.filename,
            line=line,
            column=column,
            source_line=self.line(line),
            width=width if width is not None else (span.width if span else 1),
        )

    def slice(self, span: Span) -> str:
        """The source text ``span`` covers."""
        if span.line == span.end_line:
            line = self.line(span.line) or ""
            return line[span.column - 1 : span.end_column - 1]
        first = (self.line(span.line) or "")[span.column - 1 :]
        middle = [self.line(n) or "" for n in range(span.line + 1, span.end_line)]
        last = (self.line(span.end_line) or "")[: span.end_column - 1]
        return "\n".join([first, *middle, last])

    def location(self, span: Span) -> str:
        return f"{self.filename}:{span.line}:{span.column}"


#: A word of names and numbers joined by dots or dashes: text such as a model's name
#: (``gpt-4o``, ``llama3.1``), which the DSL reads as names, numbers and operators.
_UNQUOTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)+")


def unquoted_text(text: str) -> bool:
    """Whether ``text`` is a word like ``gpt-4o`` or ``claude-3-5-sonnet``: text its writer
    meant as a string, which the DSL reads as names, numbers and operators."""
    return _UNQUOTED.fullmatch(text) is not None
