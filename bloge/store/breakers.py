"""``StoreBreakerStates``: the circuit breakers of fallback models, shared through the store.

Every worker on one store (PostgreSQL, or one SQLite file) reads and counts the same
breakers, so that the outage one worker met spares the others its timeouts. Each step is one
statement in one transaction, atomic under concurrency in both databases: a failure is
counted with an upsert that opens the breaker in the same statement when the count reaches
the threshold. The table is the store's (schema version 6, ``bloge_circuit_breakers``).
"""

from __future__ import annotations

import time

from bloge.llm.breaker import CLOSED, BreakerState
from bloge.store.sql.script import Query, Script, one
from bloge.store.store import Store


class StoreBreakerStates:
    """The :class:`~bloge.llm.breaker.BreakerStates` of ``store``: pass it to a
    :class:`~bloge.llm.breaker.CircuitBreaker` (``CircuitBreaker(states=StoreBreakerStates(
    store))``); the container does when a store is configured."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    async def state(self, key: str) -> BreakerState:
        return await self.store.run_script(_state(key))

    async def failed(self, key: str, *, failures: int, until: float) -> bool:
        return await self.store.run_script(_failed(key, failures, until), write=True)

    async def succeeded(self, key: str) -> None:
        await self.store.run_script(_succeeded(key), write=True, blind=True)

    def __repr__(self) -> str:
        return f"StoreBreakerStates({self.store.url})"


def _state(key: str) -> Script[BreakerState]:
    row = one((yield Query("SELECT failures, open_until FROM bloge_circuit_breakers "
                           "WHERE route = ?", (key,))))
    if row is None:
        return CLOSED
    return BreakerState(int(row[0]), None if row[1] is None else float(row[1]))


def _failed(key: str, failures: int, until: float) -> Script[bool]:
    opened_at_once = until if failures <= 1 else None
    row = one((yield Query(
        "INSERT INTO bloge_circuit_breakers (route, failures, open_until, updated_at) "
        "VALUES (?, 1, ?, ?) "
        "ON CONFLICT (route) DO UPDATE SET "
        "failures = bloge_circuit_breakers.failures + 1, "
        "open_until = CASE WHEN bloge_circuit_breakers.failures + 1 >= ? THEN ? "
        "ELSE bloge_circuit_breakers.open_until END, "
        "updated_at = ? "
        "RETURNING failures",
        (key, opened_at_once, time.time(), failures, until, time.time()))))
    return row is not None and int(row[0]) >= failures


def _succeeded(key: str) -> Script[None]:
    yield Query("DELETE FROM bloge_circuit_breakers WHERE route = ?", (key,))
