"""Support tickets and escalations, kept in one SQLite file.

Every call opens its own connection: operators run in worker threads, and a SQLite connection
belongs to one thread. Writes take the database lock up front (``BEGIN IMMEDIATE``), so
concurrent writers — threads or processes — queue behind SQLite's busy timeout instead of
failing halfway through a transaction. Nothing touches the disk until the first call.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from bloge.core import did_you_mean

TICKET_NUMBER_OFFSET = 1000
"""Ticket ids are ``TCK-<offset + rowid>``: the first ticket is ``TCK-1001``."""

# AUTOINCREMENT: a deleted ticket's number is never handed out again.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    priority    TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS escalations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    queue       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    eta_minutes INTEGER NOT NULL,
    created_at  TEXT NOT NULL
);
"""


class Priority(StrEnum):
    """How soon a ticket needs an answer."""

    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    URGENT = "urgent"

    @classmethod
    def parse(cls, text: str) -> Priority:
        """The priority named by ``text`` (any case); ``ValueError`` listing the valid ones."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = [p.value for p in cls]
            suggestions = did_you_mean(text.strip().lower(), names, limit=1)
            hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
            raise ValueError(
                f"unknown priority {text!r}{hint} (use one of: {', '.join(names)})"
            ) from None


@dataclass(frozen=True, slots=True)
class Ticket:
    """A stored ticket. ``number`` is SQLite's rowid; ``ticket_id`` is what people quote."""

    number: int
    title: str
    description: str
    priority: Priority
    status: str
    created_at: datetime

    @property
    def ticket_id(self) -> str:
        return f"TCK-{TICKET_NUMBER_OFFSET + self.number}"


@dataclass(frozen=True, slots=True)
class Escalation:
    """A stored hand-over of a conversation to a human queue."""

    number: int
    queue: str
    reason: str
    eta_minutes: int
    created_at: datetime


def utc_now() -> datetime:
    """The current time in UTC, to the second (the precision stored and shown)."""
    return datetime.now(UTC).replace(microsecond=0)


def iso_utc(moment: datetime) -> str:
    """``moment`` as ISO 8601 in UTC with a ``Z`` suffix, e.g. ``2024-06-12T09:30:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TicketStore:
    """Tickets and escalations in the SQLite file at ``path``; safe to share between threads."""

    __slots__ = ("_clock", "_created", "_schema_lock", "path")

    def __init__(
        self, path: str | Path, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self._schema_lock = threading.Lock()
        self._created = False

    def create_ticket(self, title: str, description: str, priority: Priority) -> Ticket:
        """Store a new open ticket and return it with its number."""
        created_at = self._clock()
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO tickets (title, description, priority, status, created_at) "
                "VALUES (?, ?, ?, 'open', ?)",
                (title, description, priority.value, iso_utc(created_at)),
            )
            number = cursor.lastrowid
        assert number is not None  # an INSERT into a rowid table always sets it
        return Ticket(number, title, description, priority, "open", created_at)

    def count_open_tickets(self) -> int:
        """How many tickets are still open."""
        with self._transaction() as connection:
            (count,) = connection.execute(
                "SELECT count(*) FROM tickets WHERE status = 'open'"
            ).fetchone()
        return int(count)

    def record_escalation(self, queue: str, reason: str, eta_minutes: int) -> Escalation:
        """Store that a conversation was handed to ``queue``."""
        created_at = self._clock()
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO escalations (queue, reason, eta_minutes, created_at) "
                "VALUES (?, ?, ?, ?)",
                (queue, reason, eta_minutes, iso_utc(created_at)),
            )
            number = cursor.lastrowid
        assert number is not None  # an INSERT into a rowid table always sets it
        return Escalation(number, queue, reason, eta_minutes, created_at)

    def escalations(self) -> list[Escalation]:
        """Every recorded escalation, oldest first."""
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT id, queue, reason, eta_minutes, created_at FROM escalations ORDER BY id"
            ).fetchall()
        return [
            Escalation(number, queue, reason, eta, datetime.fromisoformat(created))
            for number, queue, reason, eta, created in rows
        ]

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._ensure_schema()
        # isolation_level=None: we issue BEGIN ourselves, so that it is IMMEDIATE.
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def _ensure_schema(self) -> None:
        with self._schema_lock:
            if self._created:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=30)) as connection:
                connection.executescript(_SCHEMA)
            self._created = True

