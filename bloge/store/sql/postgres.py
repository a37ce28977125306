"""The PostgreSQL driver: psycopg 3 with a connection pool per event loop.

Scripts run in one transaction on a pooled connection, their statements in order. A pool is
bound to the event loop that made it, so the driver keeps one per loop (created on first use,
forgotten with its loop): the same store then serves ``asyncio.run`` calls, bloge's sync
facades and a server's loop alike. ``prepare_threshold=None`` keeps it safe behind a
transaction-mode PgBouncer.

Commits do not wait for the server's disk (``synchronous_commit = off``) unless the URL asks
with ``?synchronous_commit=on``: a bloge worker that dies loses nothing it wrote, and a
PostgreSQL server that crashes loses at most its last fraction of a second — the promise
SQLite's WAL mode makes by default, at a third of the cost per turn.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Iterable
from typing import Any, TypeVar

from bloge.store.errors import StoreError
from bloge.store.sql.script import Query, Result, Script

try:
    import psycopg
    import psycopg.sql
    import psycopg_pool
except ImportError as exc:  # pragma: no cover - depends on the extras installed
    raise ImportError(
        "a postgresql:// store needs psycopg 3 and psycopg-pool: pip install 'bloge[postgres]'"
    ) from exc

T = TypeVar("T")


class PostgresDriver:
    """Runs scripts against the database ``conninfo`` names; ``secrets`` (the password) are
    taken out of every error message; ``search_path`` selects the schema bloge's tables go in."""

    dialect = "postgresql"

    def __init__(self, conninfo: str, *, display: str, secrets: Iterable[str] = (),
                 search_path: str | None = None, synchronous_commit: bool = False,
                 max_size: int = 8, connect_timeout: float = 10.0) -> None:
        self.display = display
        self._synchronous_commit = synchronous_commit
        self._conninfo = conninfo
        self._secrets = tuple(s for s in secrets if s)
        self._search_path = search_path
        self._max_size = max_size
        self._connect_timeout = connect_timeout
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                               psycopg_pool.AsyncConnectionPool[Any]] = (
            weakref.WeakKeyDictionary())
        self._sql: dict[str, str] = {}
        self._closers: set[asyncio.Task[None]] = set()
        self._closed = False

    async def run(self, script: Script[T], *, write: bool, blind: bool = False) -> T:
        """Run ``script`` in one transaction. A ``blind`` script does not look at the results
        of its statements: they go to the server as one message, one round trip in all (the
        server runs a message of several statements as one transaction)."""
        try:
            if self._closed:
                raise StoreError("the store is closed", store=self.display)
            pool = await self._pool()
            try:
                async with pool.connection() as connection:
                    if blind:
                        return await self._send_together(connection, script)
                    async with connection.transaction():
                        return await self._drive(connection, script)
            except psycopg.Error as exc:
                raise self._translated(exc) from None
            except psycopg_pool.PoolTimeout as exc:
                raise StoreError(f"no connection to the database became free in "
                                 f"{self._connect_timeout:g} s ({self._masked(exc)})",
                                 store=self.display) from None
        finally:
            script.close()

    async def notify(self, channel: str, payload: str) -> None:
        """Tell the listeners of ``channel`` (see :meth:`listen`) ``payload``."""
        try:
            pool = await self._pool()
            async with pool.connection() as connection:
                await connection.execute("SELECT pg_notify(%s, %s)", (channel, payload))
        except psycopg.Error as exc:
            raise self._translated(exc) from None

    async def listen(self, channel: str, *, every: float) -> AsyncGenerator[str | None, None]:
        """What is told on ``channel`` as it comes, on a connection of its own; ``None`` once
        listening, then whenever ``every`` seconds passed without a word."""
        try:
            connection = await psycopg.AsyncConnection.connect(
                self._conninfo, autocommit=True,
                connect_timeout=max(1, round(self._connect_timeout)))
        except psycopg.Error as exc:
            raise self._translated(exc) from None
        try:
            await connection.execute(psycopg.sql.SQL("LISTEN {}").format(
                psycopg.sql.Identifier(channel)))
            yield None
            while True:
                async for told in connection.notifies(timeout=every):
                    yield told.payload
                yield None
        except psycopg.Error as exc:
            raise self._translated(exc) from None
        finally:
            await connection.close()

    async def aclose(self) -> None:
        self._closed = True
        loop = asyncio.get_running_loop()
        pool = self._pools.pop(loop, None)
        for closer in [closer for closer in self._closers if closer.get_loop() is loop]:
            closer.cancel()  # its pool is closed here: a loop that lives on must not keep it
        if pool is not None:
            await pool.close()

    async def _pool(self) -> psycopg_pool.AsyncConnectionPool[Any]:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is not None:
            return pool
        # A first connection outside the pool reports why it fails (a wrong password, a
        # server that is down) instead of the pool's timeout.
        try:
            probe = await psycopg.AsyncConnection.connect(
                self._conninfo, connect_timeout=max(1, round(self._connect_timeout)))
        except psycopg.Error as exc:
            raise self._translated(exc) from None
        await probe.close()
        pool = psycopg_pool.AsyncConnectionPool(
            self._conninfo, min_size=1, max_size=self._max_size, open=False,
            timeout=self._connect_timeout, configure=self._configure,
            kwargs={"autocommit": True, "prepare_threshold": None},
        )
        await pool.open(wait=True, timeout=self._connect_timeout)
        self._pools[loop] = pool
        # The pool ends with its loop. psycopg_pool takes a cancelled connection attempt for
        # a failed one and tries again later, so a pool left open when asyncio.run() cancels
        # the loop's tasks could keep that run from ever returning.
        closer = loop.create_task(_close_with_loop(pool), name="bloge-store-pool-closer")
        self._closers.add(closer)
        closer.add_done_callback(self._closers.discard)
        return pool

    async def _configure(self, connection: psycopg.AsyncConnection[Any]) -> None:
        await connection.execute(
            "SELECT set_config('synchronous_commit', %s, false)",
            ("on" if self._synchronous_commit else "off",))
        if self._search_path is not None:
            await connection.execute(
                "SELECT set_config('search_path', %s, false)", (self._search_path,))

    async def _drive(self, connection: psycopg.AsyncConnection[Any], script: Script[T]) -> T:
        try:
            query = next(script)
            async with connection.cursor() as cursor:
                while True:
                    query = script.send(await self._execute(cursor, query))
        except StopIteration as stop:
            value: T = stop.value
            return value

    async def _send_together(self, connection: psycopg.AsyncConnection[Any],
                             script: Script[T]) -> T:
        # Values are bound on the client (psycopg's ClientCursor quotes them), so that the
        # statements can travel as one text.
        cursor = psycopg.AsyncClientCursor(connection)
        statements: list[str] = []
        unseen = Result([], -1)
        try:
            query = next(script)
            while True:
                sql = self._placeholders(query.sql)
                rows = query.params if query.many else (query.params,)
                statements.extend(cursor.mogrify(sql, params) for params in rows)
                query = script.send(unseen)
        except StopIteration as stop:
            value: T = stop.value
        if statements:
            async with cursor:
                await cursor.execute(";\n".join(statements))
        return value

    def _placeholders(self, sql: str) -> str:
        converted = self._sql.get(sql)
        if converted is None:
            converted = self._sql[sql] = sql.replace("?", "%s")
        return converted

    async def _execute(self, cursor: psycopg.AsyncCursor[Any], query: Query) -> Result:
        sql = self._placeholders(query.sql)
        if query.many:
            await cursor.executemany(sql, query.params)
            return Result([], cursor.rowcount)
        await cursor.execute(sql, query.params)
        rows = await cursor.fetchall() if cursor.description is not None else []
        return Result(rows, cursor.rowcount)

    def _translated(self, exc: psycopg.Error) -> StoreError:
        text = self._masked(exc)
        if isinstance(exc, psycopg.OperationalError):
            if "password" in text or "authentication" in text:
                return StoreError(f"the server refused the credentials ({text}); check the "
                                  "user and password in bloge.store.url", store=self.display)
            return StoreError(f"cannot reach the database ({text}); check that PostgreSQL is "
                              "running and bloge.store.url names it", store=self.display)
        if getattr(exc, "sqlstate", None) == "53100":
            return StoreError(f"the database's disk is full ({text})", store=self.display)
        return StoreError(f"{type(exc).__name__}: {text}", store=self.display)

    def _masked(self, exc: BaseException) -> str:
        text = " ".join(str(exc).split())
        for secret in self._secrets:
            text = text.replace(secret, "****")
        return text


async def _close_with_loop(pool: psycopg_pool.AsyncConnectionPool[Any]) -> None:
    """Wait until cancelled — as every task of a loop is when ``asyncio.run()`` ends it —
    then close ``pool`` (which does nothing if it is closed already)."""
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        await pool.close()
