"""A store that cannot be used fails with a StoreError that names it and says what to do."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bloge.core.errors import BlogeUsageError
from bloge.store import StoreError, open_store
from bloge.store.sql.schema import VERSION
from bloge.store.urls import parse_store_url
from tests.store.conftest import POSTGRES_DSN, postgres_or_skip, psycopg_or_skip


async def test_a_file_that_is_not_sqlite_is_named_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "bloge.db"
    path.write_text("these are my notes, not a database\n" * 100)
    store = open_store(f"sqlite:///{path}")
    with pytest.raises(StoreError, match="not a SQLite database") as failure:
        await store.list_runs()
    assert str(path) in str(failure.value)
    await store.aclose()
    assert path.read_text().startswith("these are my notes")


async def test_a_locked_database_says_so(tmp_path: Path) -> None:
    path = tmp_path / "bloge.db"
    store = open_store(f"sqlite:///{path}", busy_timeout=0.05)
    await store.migrate()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked by another process"):
            await store.prune(older_than=0)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        await store.aclose()


async def test_a_database_path_under_a_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    store = open_store(f"sqlite:///{tmp_path / 'file' / 'bloge.db'}")
    with pytest.raises(StoreError, match="cannot create the folder"):
        await store.list_threads()
    await store.aclose()


async def test_a_schema_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bloge.db"
    store = open_store(f"sqlite:///{path}")
    await store.migrate()
    await store.aclose()
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO bloge_schema (version) VALUES (?)", (VERSION + 1,))
    newer = open_store(f"sqlite:///{path}")
    with pytest.raises(StoreError, match=f"version {VERSION + 1}.*upgrade bloge"):
        await newer.list_runs()
    await newer.aclose()


async def test_migrate_reports_the_versions(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}", auto_migrate=False)
    assert await store.migrate() == (0, VERSION)
    assert await store.migrate() == (VERSION, VERSION)
    await store.aclose()


async def test_an_unknown_scheme_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="unknown scheme 'mysql'"):
        open_store("mysql://root:hunter2@localhost/db")


async def test_postgres_down_is_named_with_the_password_masked() -> None:
    psycopg_or_skip()
    store = open_store("postgresql://postgres:hunter2@127.0.0.1:1/test")
    with pytest.raises(StoreError, match="cannot reach the database") as failure:
        await store.list_runs()
    assert "hunter2" not in str(failure.value)
    assert "postgres:****@127.0.0.1:1" in str(failure.value)
    await store.aclose()


@pytest.mark.parametrize("password", ["hun?ter2", "hun#ter2", "hun/ter2", "hun@ter2"])
def test_a_password_with_unencoded_delimiters_is_masked_and_read_whole(password: str) -> None:
    # Before, "?", "#" or "/" ended the password: the store's name showed it in clear, and
    # the connection was made with a part of it.
    parsed = parse_store_url(f"postgresql://bob:{password}@db.example:5432/shop?schema=s")
    assert parsed.display == "postgresql://bob:****@db.example:5432/shop?schema=s"
    assert parsed.password == password
    assert parsed.search_path == "s"
    assert parsed.conninfo is not None
    assert password not in parsed.conninfo  # percent-encoded in the connection string


async def test_a_missing_postgres_database_is_a_store_error() -> None:
    postgres_or_skip()
    url = POSTGRES_DSN.rsplit("/", 1)[0] + "/bloge_no_such_database"
    store = open_store(url)
    with pytest.raises(StoreError, match="bloge_no_such_database"):
        await store.list_runs()
    await store.aclose()


@pytest.fixture
def unused_schema() -> Iterator[str]:
    """A schema name that no schema has yet; whatever a test created under it is dropped."""
    postgres_or_skip()
    import psycopg  # noqa: PLC0415 -- an extra, there once postgres_or_skip() passed

    name = f"bloge_test_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


async def test_a_url_schema_that_does_not_exist_yet_is_created(unused_schema: str) -> None:
    store = open_store(f"{POSTGRES_DSN}?schema={unused_schema}")
    assert await store.migrate() == (0, VERSION)
    assert await store.list_runs() == []
    await store.aclose()
    again = open_store(f"{POSTGRES_DSN}?schema={unused_schema}")
    assert await again.migrate() == (VERSION, VERSION)
    await again.aclose()


async def test_a_search_path_of_missing_schemas_is_named(unused_schema: str) -> None:
    store = open_store(f"{POSTGRES_DSN}?schema={unused_schema},{unused_schema}_b")
    with pytest.raises(StoreError, match=f"no schema of the search path '{unused_schema},"):
        await store.list_runs()
    await store.aclose()


def test_a_postgres_store_serves_one_asyncio_run_after_another(postgres_schema: str) -> None:
    # Each asyncio.run ends with the pool it used growing for the runs (psycopg_pool retries
    # a cancelled connection attempt): before, the first run never returned.
    script = textwrap.dedent("""
        import asyncio, sys
        from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
        from bloge.llm import FunctionProvider, LlmResponse
        from bloge.store import open_store

        model = FunctionProvider(lambda request: LlmResponse("ok"))
        registry = OperatorRegistry({"llmChat": LlmChatOperator(model)})
        agent = AgentLoopOperator("a", AgentBuilder.create("a").model("m").build(), registry,
                                  store=open_store(sys.argv[1]))

        async def main():
            await asyncio.gather(*[agent.aexecute("hi") for _ in range(4)])

        for _ in range(5):
            asyncio.run(main())
        print("done")
    """)
    finished = subprocess.run(
        [sys.executable, "-c", script, f"{POSTGRES_DSN}?schema={postgres_schema}"],
        capture_output=True, text=True, timeout=60, check=False)
    assert (finished.returncode, finished.stdout) == (0, "done\n"), finished.stderr
