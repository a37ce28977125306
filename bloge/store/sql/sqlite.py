"""The SQLite driver: one connection on one thread of its own, scripts run there whole.

Each script is one transaction (``BEGIN IMMEDIATE`` when it writes, so that writers queue
for the lock instead of failing half-way), run synchronously on the driver's thread: a whole
batch of writes costs one hop between the event loop and that thread. The file is opened in
WAL mode with a busy timeout, so that readers never wait for the writer and several
processes can share one file.
"""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from bloge.store.errors import StoreError
from bloge.store.sql.script import Query, Result, Script

T = TypeVar("T")


class SqliteDriver:
    """Runs scripts against the SQLite database at ``path`` (``":memory:"`` for one that
    lives as long as the driver). ``busy_timeout`` is how long a write waits for another
    process's lock, in seconds."""

    dialect = "sqlite"

    def __init__(self, path: Path | str, *, display: str, busy_timeout: float = 5.0) -> None:
        self.path = path
        self.display = display
        self.busy_timeout = busy_timeout
        self._connection: sqlite3.Connection | None = None
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="bloge-store-sqlite")
        self._closed = False

    async def run(self, script: Script[T], *, write: bool, blind: bool = False) -> T:
        """Run ``script`` in one transaction on the driver's thread (``blind``, a script that
        ignores its statements' results, makes no difference here)."""
        if self._closed:
            script.close()
            raise StoreError("the store is closed", store=self.display)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._transaction, script, write)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close)
        self._executor.shutdown(wait=False)

    # -- on the driver's thread

    def _transaction(self, script: Script[T],
                     write: bool) -> T:  # noqa: FBT001 -- run_in_executor passes no keywords
        try:
            connection = self._connect()
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                value = _drive(connection, script)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._translated(exc) from exc
        except OSError as exc:  # the folder of the file cannot be made
            raise StoreError(f"cannot create the folder of the database: {exc}",
                             store=self.display) from exc
        finally:
            script.close()
        return value

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(str(self.path), isolation_level=None,
                                     check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if self.path != ":memory:":
                connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _translated(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if "locked" in text or "busy" in text:
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


def _drive(connection: sqlite3.Connection, script: Script[T]) -> T:
    try:
        query = next(script)
        while True:
            query = script.send(_execute(connection, query))
    except StopIteration as stop:
        value: T = stop.value
        return value


def _execute(connection: sqlite3.Connection, query: Query) -> Result:
    if query.many:
        cursor = connection.executemany(query.sql, query.params)
        return Result([], cursor.rowcount)
    cursor = connection.execute(query.sql, query.params)
    return Result(cursor.fetchall(), cursor.rowcount)
