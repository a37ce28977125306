"""A read-only, in-memory SQLite copy of the metrics dataset that models may query.

Schema:

- ``metrics(date TEXT, name TEXT, value REAL)`` — one row per metric per day (ISO dates);
- ``daily_metrics(date TEXT, <one REAL column per metric>)`` — a view, one row per day.

Read-only is enforced in three layers: the text must start a ``SELECT`` or ``WITH`` statement
(a check that exists for its clear message, not for safety); then SQLite itself, whose
authorizer denies every action but reading and calling functions while a statement compiles,
and whose ``PRAGMA query_only`` refuses writes should anything slip through. A progress
handler stops queries that run away (a recursive CTE without end), and results are capped at
``max_rows``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any

from examples.analyst.dataset import MetricsDataset

DEFAULT_MAX_ROWS = 200
DEFAULT_MAX_INSTRUCTIONS = 50_000_000
"""A query needing more SQLite VM instructions than this (under a second of work, far beyond
anything this small dataset needs) is a runaway, not an analysis."""
# SQLite calls the progress handler every _PROGRESS_INTERVAL virtual-machine instructions.
_PROGRESS_INTERVAL = 1000
_READ_ACTIONS = frozenset({
    sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE,
})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)
_FIRST_WORD = re.compile(r"[A-Za-z]*")


@dataclass(frozen=True, slots=True)
class QueryResult:
    """A query's column names and rows; ``truncated`` when rows beyond the cap were dropped."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool


class AnalyticsDatabase:
    """The dataset loaded once into memory; queries from many threads run one at a time."""

    __slots__ = ("_connection", "_lock", "_max_progress_calls", "_progress_calls", "metric_names")

    def __init__(
        self, dataset: MetricsDataset, *, max_instructions: int = DEFAULT_MAX_INSTRUCTIONS
    ) -> None:
        for name in dataset.names:
            if not _IDENTIFIER.fullmatch(name):
                raise ValueError(f"metric name {name!r} cannot be a SQL column name")
        self.metric_names = dataset.names
        # check_same_thread=False: operators run in worker threads; _lock serialises them.
        self._connection = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        self._progress_calls = 0
        self._max_progress_calls = max(1, max_instructions // _PROGRESS_INTERVAL)
        _load(self._connection, dataset)
        self._connection.execute("PRAGMA query_only = ON")
        self._connection.set_authorizer(_authorize)
        self._connection.set_progress_handler(self._on_progress, _PROGRESS_INTERVAL)

    def query(self, sql: str, *, max_rows: int = DEFAULT_MAX_ROWS) -> QueryResult:
        """Run one read-only statement; ``ValueError`` with SQLite's message when it fails."""
        _require_single_select(sql)
        with self._lock:
            self._progress_calls = 0
            try:
                cursor = self._connection.execute(sql)
                fetched = cursor.fetchmany(max_rows + 1)
            except sqlite3.Error as exc:
                raise ValueError(_explain(exc)) from exc
            columns = tuple(column[0] for column in cursor.description or ())
            cursor.close()
        rows = tuple(tuple(_json_value(v) for v in row) for row in fetched[:max_rows])
        return QueryResult(columns, rows, truncated=len(fetched) > max_rows)

    def describe_schema(self) -> str:
        """The tables a query can read, as a model should be told about them."""
        columns = ", ".join(f"{name} REAL" for name in self.metric_names)
        return (
            "Table metrics(date TEXT 'YYYY-MM-DD', name TEXT, value REAL): one row per metric "
            f"per day; name is one of {', '.join(self.metric_names)}. "
            f"View daily_metrics(date TEXT, {columns}): one row per day."
        )

    def close(self) -> None:
        """Release the in-memory database."""
        self._connection.close()

    def _on_progress(self) -> int:
        self._progress_calls += 1
        return 1 if self._progress_calls > self._max_progress_calls else 0


def _load(connection: sqlite3.Connection, dataset: MetricsDataset) -> None:
    connection.execute("CREATE TABLE metrics (date TEXT NOT NULL, name TEXT NOT NULL, value REAL)")
    connection.executemany(
        "INSERT INTO metrics (date, name, value) VALUES (?, ?, ?)",
        ((row.day.isoformat(), row.name, row.value) for row in dataset.rows()),
    )
    connection.execute("CREATE INDEX metrics_by_name_and_date ON metrics (name, date)")
    # Names were checked against _IDENTIFIER, so quoting them into the DDL is safe.
    pivots = ", ".join(
        f"max(CASE WHEN name = '{name}' THEN value END) AS \"{name}\"" for name in dataset.names
    )
    connection.execute(
        f"CREATE VIEW daily_metrics AS SELECT date, {pivots} "  # noqa: S608 -- names checked
        "FROM metrics GROUP BY date"
    )
    connection.commit()


def _authorize(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _require_single_select(sql: str) -> None:
    text = _LEADING_COMMENTS.sub("", sql, count=1)
    if not text.strip():
        raise ValueError("the query is empty: send one SELECT statement")
    match = _FIRST_WORD.match(text)
    keyword = match.group(0).upper() if match and match.group(0) else text.split(None, 1)[0]
    if keyword not in ("SELECT", "WITH"):
        raise ValueError(
            f"only a single SELECT (or WITH ... SELECT) statement may run; got {keyword}. "
            "The analytics database is read-only."
        )


def _explain(exc: sqlite3.Error) -> str:
    message = str(exc)
    if "not authorized" in message:
        return f"{message}: the analytics database is read-only; only SELECT queries may run"
    if "one statement at a time" in message:
        return "only a single SQL statement may run at a time; remove everything after the first ;"
    if message == "interrupted":
        return "the query ran too long and was stopped; add a LIMIT or a narrower WHERE clause"
    return f"SQL error: {message}"


def _json_value(value: object) -> object:
    # BLOBs are the one SQLite type JSON cannot carry; show them as hex.
    return value.hex() if isinstance(value, bytes) else value

