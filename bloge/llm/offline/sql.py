"""A simple, read-only ``SELECT`` for a SQL-running tool, built from a user's question.

SQL written in the message is used as it stands. Otherwise the statement reads the newest
rows of one table, filtered to the measure the question names, optionally aggregated. The
table comes from a schema written in the tool's or the agent's text (``metrics(date TEXT,
name TEXT, value REAL)``); without one, the only table the statement can name is the
question's subject itself (``SELECT * FROM orders``), and the tool says when there is none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bloge.llm.offline.words import words


@dataclass(frozen=True, slots=True)
class Table:
    """A table's name and column names, as a schema hint spells them."""

    name: str
    columns: tuple[str, ...]


_WRITTEN_SQL = re.compile(r"\b(?:select|with)\b.+\bfrom\b.*", re.IGNORECASE | re.DOTALL)
_COLUMN = r"[A-Za-z_]\w*(?:\s+[A-Za-z]+)?"
_TABLE = re.compile(rf"\b([A-Za-z_]\w*)\s*\(\s*({_COLUMN}(?:\s*,\s*{_COLUMN})*)\s*\)")
_AGGREGATES = (
    (frozenset({"average", "avg", "mean"}), "AVG", "average"),
    (frozenset({"total", "sum"}), "SUM", "total"),
    (frozenset({"max", "maximum", "highest", "peak", "best"}), "MAX", "highest"),
    (frozenset({"min", "minimum", "lowest", "worst"}), "MIN", "lowest"),
    (frozenset({"count"}), "COUNT", "count"),
)
_SAFE_NAME = re.compile(r"[A-Za-z0-9_]+")
_DATE_COLUMNS = ("date", "day", "timestamp", "ts", "created_at")
_NAME_COLUMNS = ("name", "metric", "metric_name")
_VALUE_COLUMNS = ("value", "amount", "val")


def written_sql(message: str) -> str | None:
    """The SQL statement the user wrote into ``message``, if any."""
    match = _WRITTEN_SQL.search(message)
    return match[0].strip().rstrip(";").strip() if match else None


def tables_in(texts: Iterable[str]) -> list[Table]:
    """Every ``name(column TYPE, …)`` schema written in ``texts``, in order."""
    return [
        Table(m[1], tuple(c.split()[0] for c in m[2].split(",")))
        for text in texts for m in _TABLE.finditer(text)
    ]


def select_for(message: str, *, subject: str | None, days: int, hints: Iterable[str] = ()) -> str:
    """A SELECT answering ``message`` about ``subject`` over the last ``days`` rows."""
    if written := written_sql(message):
        return written
    if subject is not None and not _SAFE_NAME.fullmatch(subject):
        subject = None  # never quote arbitrary text into SQL
    tables = tables_in(hints)
    if not tables:
        return f"SELECT * FROM {subject} LIMIT {days}" if subject else ""
    table, filtered = _table_for(subject, tables)
    columns = table.columns
    date = _first(_DATE_COLUMNS, columns)
    order = f" ORDER BY {date} DESC" if date else ""
    if filtered and subject:
        value = _first(_VALUE_COLUMNS, columns) or "value"
        name = _first(_NAME_COLUMNS, columns) or "name"
        picked = f"{date}, {value}" if date else value
        base = f"SELECT {picked} FROM {table.name} WHERE {name} = '{subject}'{order} LIMIT {days}"
    elif subject and subject in columns:
        value = subject
        picked = f"{date}, {value}" if date else value
        base = f"SELECT {picked} FROM {table.name}{order} LIMIT {days}"
    else:
        return f"SELECT * FROM {table.name}{order} LIMIT {days}"
    aggregate = _aggregate(message)
    if aggregate is None:
        return base
    function, alias = aggregate
    return f"SELECT {function}({value}) AS {alias} FROM ({base})"


def _table_for(subject: str | None, tables: list[Table]) -> tuple[Table, bool]:
    """The table to read (of at least one) and whether it is long-format (a name column to
    filter on)."""
    for table in tables:
        if _first(_NAME_COLUMNS, table.columns) and _first(_VALUE_COLUMNS, table.columns):
            return table, True
    for table in tables:
        if subject and subject in table.columns:
            return table, False
    return tables[0], False


def _first(candidates: tuple[str, ...], columns: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in columns), None)


def _aggregate(message: str) -> tuple[str, str] | None:
    spoken = set(words(message))
    return next(((fn, alias) for cues, fn, alias in _AGGREGATES if spoken & cues), None)
