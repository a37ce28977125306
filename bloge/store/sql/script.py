"""Database work written once for every backend, sans I/O.

A *script* is a generator that yields :class:`Query` values and receives each one's
:class:`Result`; a driver runs it inside one transaction — synchronously on SQLite's thread,
with ``await`` on PostgreSQL — and returns what the script returns. SQL is written with ``?``
placeholders and types both databases accept; a driver rewrites the placeholders for its
database.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")


class Query(NamedTuple):
    """One statement. With ``many``, ``params`` is a sequence of parameter tuples.

    A named tuple rather than a frozen dataclass: every durable point of a turn makes a few
    (some ten a turn), and a frozen dataclass sets each field through
    ``object.__setattr__``, a call of its own."""

    sql: str
    params: Sequence[Any] = ()
    many: bool = False


@dataclass(frozen=True, slots=True)
class Result:
    """The rows a statement returned (none for most writes) and the rows it changed."""

    rows: list[tuple[Any, ...]]
    rowcount: int


Script = Generator[Query, Result, T]


def one(result: Result) -> tuple[Any, ...] | None:
    """The first row, or ``None``."""
    return result.rows[0] if result.rows else None
