"""Every store test runs against every backend: memory, a SQLite file, and a real PostgreSQL
(``BLOGE_TEST_POSTGRES_DSN``, default the local server), each in a fresh database."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bloge.store import Store, open_store
from tests.processes import said_until

POSTGRES_DSN = os.environ.get("BLOGE_TEST_POSTGRES_DSN",
                              "postgresql://postgres@127.0.0.1:5432/test")
REQUIRED = os.environ.get("BLOGE_REQUIRE_SERVICES") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``, or fail with it under ``BLOGE_REQUIRE_SERVICES=1`` (CI)."""
    if REQUIRED:
        pytest.fail(f"BLOGE_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def psycopg_or_skip() -> None:
    """Skip (fail, in CI) without the PostgreSQL driver, the extra ``[dev]`` leaves out: a
    ``postgresql://`` store cannot even be opened without it, server or not."""
    if any(importlib.util.find_spec(name) is None for name in ("psycopg", "psycopg_pool")):
        skip_or_fail("psycopg is not installed (pip install -e '.[postgres]')")


def postgres_or_skip() -> None:
    """Skip (fail, in CI) when PostgreSQL is not there to test against."""
    psycopg_or_skip()
    import psycopg  # noqa: PLC0415 -- an extra, there once psycopg_or_skip() passed

    try:
        psycopg.connect(POSTGRES_DSN, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        skip_or_fail(f"PostgreSQL is not reachable at {POSTGRES_DSN}: {exc}")


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """A fresh schema in the test database, dropped afterwards."""
    postgres_or_skip()
    import psycopg  # noqa: PLC0415 -- an extra, there once postgres_or_skip() passed

    name = f"bloge_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{name}"')
    yield name
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{name}" CASCADE')


def _url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'bloge.db'}"
    schema = request.getfixturevalue("postgres_schema")
    return f"{POSTGRES_DSN}?schema={schema}"


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return _url(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def durable_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that outlives the process that wrote it."""
    return _url(request.param, request, tmp_path)


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    opened = open_store(store_url)
    yield opened
    await opened.aclose()


CRASH_CHILD = Path(__file__).with_name("crash_child.py")
ROOT = Path(__file__).resolve().parents[2]


def killed_when_ready(script: Path, *arguments: str) -> None:
    """``python script arguments`` run until it prints ``ready`` (where it hangs for the test),
    then killed there with SIGKILL; what it wrote to stderr is the failure if it ended
    before."""
    with subprocess.Popen([sys.executable, str(script), *arguments],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as child:
        assert child.stderr is not None
        said = said_until(child, bool, '"ready"')  # once the child hangs, or it fails
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert said == ["ready"], child.stderr.read()


def lines(logs: Path, name: str) -> list[str]:
    """The lines a child script wrote to ``logs/<name>.log`` (one a call; none if it wrote
    none)."""
    path = logs / f"{name}.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def killed_run(durable_store_url: str, tmp_path: Path) -> Path:
    """The child (``crash_child.py``) ran until its second tool round hung, and was killed
    there with SIGKILL (its lease, 30 s, still holds)."""
    killed_when_ready(CRASH_CHILD, durable_store_url, str(tmp_path))
    return tmp_path
