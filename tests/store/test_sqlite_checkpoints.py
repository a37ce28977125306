"""A SQLite store's checkpoints (the WAL copied back into the file, both synced: tens of ms)
run on the driver's thread, never in the event loop whose writes run inline: a checkpoint
there held every stream the loop serves."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from bloge.store.sql import sqlite
from bloge.store.sql.script import Query, Result
from bloge.store.sql.sqlite import SqliteDriver

ROW = "x" * 8000  # two pages a row


def insert_rows(count: int) -> Generator[Query, Result, None]:
    yield Query("INSERT INTO filler (body) VALUES (?)", [(ROW,)] * count, many=True)


def frames_in_wal(path: Path) -> int:
    """How many frames the WAL holds (a passive checkpoint tells, copying them)."""
    with sqlite3.connect(path) as observer:
        _, frames, _ = observer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(frames)


def create_filler() -> Generator[Query, Result, None]:
    yield Query("CREATE TABLE filler (body TEXT)")


async def test_writes_in_the_event_loop_never_checkpoint(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "CHECKPOINT_WRITES", 1_000_000)  # the driver's thread starts none
    path = tmp_path / "bloge.db"
    driver = SqliteDriver(path, display="test")
    await driver.run(create_filler(), write=True)
    for _ in range(sqlite.CHECKPOINT_PAGES // 100 + 2):  # past SQLite's own threshold
        await driver.run(insert_rows(50), write=True)
    assert frames_in_wal(path) > sqlite.CHECKPOINT_PAGES  # none copied back, none restarted
    await driver.aclose()


async def test_the_drivers_thread_checkpoints_every_so_many_inline_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "CHECKPOINT_WRITES", 2)
    checkpointed: list[str] = []
    checkpoint = SqliteDriver._checkpointed  # noqa: SLF001 -- which thread runs it is the point

    def on_its_thread(driver: SqliteDriver) -> None:
        checkpointed.append(threading.current_thread().name)
        checkpoint(driver)

    monkeypatch.setattr(SqliteDriver, "_checkpointed", on_its_thread)
    driver = SqliteDriver(tmp_path / "bloge.db", display="test")
    await driver.run(create_filler(), write=True)
    await driver.run(insert_rows(1), write=True)
    await driver.aclose()  # after the checkpoint, on the same thread
    assert [name.startswith("bloge-store-sqlite") for name in checkpointed] == [True]



class HeldCheckpoint:
    """The driver's thread's connection, whose checkpoint says it began and waits to be let
    go: what the loop's writes do meanwhile is the point."""

    def __init__(self) -> None:
        self.connection: sqlite3.Connection | None = None
        self.began = threading.Event()
        self.go_on = threading.Event()

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if "wal_checkpoint" in sql:
            self.began.set()
            self.go_on.wait()
        assert self.connection is not None
        return self.connection.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


async def test_a_write_asked_while_a_checkpoint_copies_waits_for_it_on_the_drivers_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Written beside it, in the loop, its frames would keep the checkpoint from copying the
    # whole WAL, and under steady writes the WAL would never start over.
    monkeypatch.setattr(sqlite, "CHECKPOINT_WRITES", 1)
    held = HeldCheckpoint()
    waiting = SqliteDriver._waiting_connection  # noqa: SLF001 -- the connection it checkpoints on

    def held_connection(driver: SqliteDriver) -> Any:
        if held.connection is None:
            held.connection = waiting(driver)
        return held

    monkeypatch.setattr(SqliteDriver, "_waiting_connection", held_connection)
    driver = SqliteDriver(tmp_path / "bloge.db", display="test")
    await driver.run(create_filler(), write=True)  # its checkpoint begins, and waits
    await asyncio.to_thread(held.began.wait)
    threads: list[str] = []

    def recorded() -> Generator[Query, Result, None]:
        threads.append(threading.current_thread().name)
        yield from insert_rows(1)

    write = asyncio.ensure_future(driver.run(recorded(), write=True))
    asyncio.get_running_loop().call_soon(held.go_on.set)  # once the write was asked
    await write
    await driver.aclose()
    assert [name.startswith("bloge-store-sqlite") for name in threads] == [True]


async def test_a_checkpoint_that_failed_is_told_and_fails_no_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sqlite, "CHECKPOINT_WRITES", 1)
    held = HeldCheckpoint()
    held.go_on.set()
    waiting = SqliteDriver._waiting_connection  # noqa: SLF001 -- the connection it checkpoints on

    def failing(driver: SqliteDriver) -> Any:
        held.connection = waiting(driver)
        held.connection.close()  # its checkpoint fails: "Cannot operate on a closed database"
        return held

    monkeypatch.setattr(SqliteDriver, "_waiting_connection", failing)
    driver = SqliteDriver(tmp_path / "bloge.db", display="sqlite:///var/bloge.db")
    await driver.run(create_filler(), write=True)  # the one write: its checkpoint fails
    await asyncio.to_thread(held.began.wait)
    await driver.aclose()  # after the checkpoint, whose failure is told first
    told = [r.getMessage() for r in caplog.records if r.name == "bloge.store"]
    assert told == [("a checkpoint failed (the next one copies what it did not): run store "
                     "sqlite:///var/bloge.db: ProgrammingError: Cannot operate on a closed "
                     "database.")]
