"""The SQLite driver: each script one transaction, run whole, on the caller's thread when it
can be, on a thread of the driver's own when it must wait.

A handoff to another thread costs far more than a transaction here (a wake-up and the GIL
both ways, some 100-200 µs, against tens of µs for a batch of writes in WAL mode), so a
script first runs inline, on a connection that never waits (``busy_timeout = 0``). Only when
another process holds the write lock — ``BEGIN IMMEDIATE`` says so before the script has
started — or another thread is using the inline connection, the script goes to the driver's
thread, whose connection waits up to ``busy_timeout`` for the lock: the event loop never
blocks on another process. The file is in WAL mode, so readers never wait for a writer and
several processes can share it. A store in memory has one connection, always inline.

SQLite's own checkpoints, which copy the WAL back into the file and sync both, would run in
the commit that crosses :data:`CHECKPOINT_PAGES`: inline, they held the event loop, and every
stream it serves, for 10-60 ms every few seconds under load. The inline connection makes
none; every :data:`CHECKPOINT_WRITES` inline writes, one (``PASSIVE``: it waits for no one)
runs on the driver's thread, beside the loop, holding the inline connection: the loop's
writes meanwhile wait on that thread, so that the checkpoint copies the whole WAL and the next
write starts it over (with writes added as it copied, a busy server's WAL would grow).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeAlias, TypeVar

from bloge.store.errors import StoreError
from bloge.store.sql.script import Query, Result, Script

T = TypeVar("T")
_log = logging.getLogger("bloge.store")
Connect: TypeAlias = Callable[[], sqlite3.Connection]

#: SQLite's own threshold for a checkpoint (``wal_autocheckpoint``), kept by the driver's
#: thread's connection ...
CHECKPOINT_PAGES = 1000
#: ... and how many inline writes start one on that thread (a batch of a stream's events is
#: a few pages).
CHECKPOINT_WRITES = 100


class _BusyError(Exception):
    """Another process holds the write lock: the script has not started."""


class SqliteDriver:
    """Runs scripts against the SQLite database at ``path`` (``":memory:"`` for one that
    lives as long as the driver). ``busy_timeout`` is how long a write waits for another
    process's lock, in seconds."""

    dialect = "sqlite"

    def __init__(self, path: Path | str, *, display: str, busy_timeout: float = 5.0) -> None:
        self.path = path
        self.display = display
        self.busy_timeout = busy_timeout
        self._memory = path == ":memory:"
        self._inline: sqlite3.Connection | None = None
        self._waiting: sqlite3.Connection | None = None
        self._inline_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="bloge-store-sqlite")
        self._closed = False
        self._inline_writes = 0
        self._checkpoint: asyncio.Future[None] | None = None

    async def run(self, script: Script[T], *, write: bool, blind: bool = False) -> T:
        """Run ``script`` in one transaction. A ``blind`` script ignores its statements'
        results: none are read back for it."""
        if self._closed:
            script.close()
            raise StoreError("the store is closed", store=self.display)
        loop = asyncio.get_running_loop()
        if self._inline_lock.acquire(blocking=self._memory):
            try:
                value = self._transaction(self._inline_connection, script, write, blind)
            except _BusyError:
                pass  # another process writes: wait for it on the driver's thread
            else:
                if write and not self._memory:
                    self._wrote_inline(loop)
                return value
            finally:
                self._inline_lock.release()
        return await loop.run_in_executor(self._executor, self._transaction,
                                          self._waiting_connection, script, write, blind)

    def _wrote_inline(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start a checkpoint on the driver's thread every :data:`CHECKPOINT_WRITES` inline
        writes (one at a time)."""
        self._inline_writes += 1
        if self._inline_writes % CHECKPOINT_WRITES or self._checkpoint is not None:
            return
        self._checkpoint = loop.run_in_executor(self._executor, self._checkpointed)
        self._checkpoint.add_done_callback(self._checkpoint_done)

    def _checkpointed(self) -> None:
        # The inline connection is held meanwhile: the loop's writes wait on this thread, so
        # that no frame is added as the WAL is copied, and the next write starts it over.
        # Otherwise a steady stream of writes would never let it start over, and it would grow.
        with self._inline_lock:
            if not self._closed:
                self._waiting_connection().execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _checkpoint_done(self, checkpoint: asyncio.Future[None]) -> None:
        self._checkpoint = None
        error = None if checkpoint.cancelled() else checkpoint.exception()
        if error is not None:  # it fails no write: the next one copies what it did not
            told = self._translated(error) if isinstance(error, sqlite3.Error) else error
            _log.warning("a checkpoint failed (the next one copies what it did not): %s", told)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close)
        self._executor.shutdown(wait=False)

    def _transaction(self, connect: Connect, script: Script[T],
                     write: bool,  # noqa: FBT001 -- run_in_executor passes no keywords
                     blind: bool) -> T:  # noqa: FBT001 -- ditto
        try:
            connection = connect()
            try:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.OperationalError as exc:
                if _busy(exc) and connection is self._inline and not self._memory:
                    raise _BusyError from exc
                raise
            try:
                value = _drive_blind(connection, script) if blind else _drive(connection, script)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except _BusyError:
            raise
        except sqlite3.Error as exc:
            script.close()
            raise self._translated(exc) from exc
        except OSError as exc:  # the folder of the file cannot be made
            script.close()
            raise StoreError(f"cannot create the folder of the database: {exc}",
                             store=self.display) from exc
        except BaseException:
            script.close()
            raise
        script.close()
        return value

    def _inline_connection(self) -> sqlite3.Connection:
        if self._inline is None:
            self._inline = self._open(busy_timeout=self.busy_timeout if self._memory else 0.0,
                                      checkpoints=False)
        return self._inline

    def _waiting_connection(self) -> sqlite3.Connection:
        if self._waiting is None:
            self._waiting = self._open(busy_timeout=self.busy_timeout, checkpoints=True)
        return self._waiting

    def _open(self, *, busy_timeout: float, checkpoints: bool) -> sqlite3.Connection:
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(str(self.path), isolation_level=None,
                                     check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            if not self._memory:
                connection.execute("PRAGMA journal_mode = WAL")
                # The inline connection never checkpoints (see the module's docs).
                pages = CHECKPOINT_PAGES if checkpoints else 0
                connection.execute(f"PRAGMA wal_autocheckpoint = {pages}")
            connection.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    def _close(self) -> None:
        with self._inline_lock:
            for connection in (self._inline, self._waiting):
                if connection is not None:
                    connection.close()
            self._inline = self._waiting = None

    def _translated(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if _busy(exc):
            problem = (f"the database is locked by another process (waited "
                       f"{self.busy_timeout:g} s); try again, or raise the busy timeout")
        elif "not a database" in text or "malformed" in text:
            problem = ("the file is not a SQLite database, or it is damaged; point "
                       "bloge.store.url at another file")
        elif "disk is full" in text or "disk I/O" in text:
            problem = f"cannot write: {text}; free disk space"
        elif isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
            problem = (f"cannot open the database file ({text}); check the folder exists "
                       "and is writable")
        elif "readonly" in text:
            problem = f"cannot write: {text}; check the file's permissions"
        else:
            problem = f"{type(exc).__name__}: {text}"
        return StoreError(problem, store=self.display)


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _drive(connection: sqlite3.Connection, script: Script[T]) -> T:
    try:
        query = next(script)
        while True:
            query = script.send(_execute(connection, query))
    except StopIteration as stop:
        value: T = stop.value
        return value


#: What a blind script is sent for each of its statements.
_UNSEEN = Result([], -1)


def _drive_blind(connection: sqlite3.Connection, script: Script[T]) -> T:
    try:
        query = next(script)
        while True:
            if query.many:
                connection.executemany(query.sql, query.params)
            else:
                connection.execute(query.sql, query.params)
            query = script.send(_UNSEEN)
    except StopIteration as stop:
        value: T = stop.value
        return value


def _execute(connection: sqlite3.Connection, query: Query) -> Result:
    if query.many:
        cursor = connection.executemany(query.sql, query.params)
        return Result([], cursor.rowcount)
    cursor = connection.execute(query.sql, query.params)
    return Result(cursor.fetchall(), cursor.rowcount)
