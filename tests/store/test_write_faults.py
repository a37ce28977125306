"""A write the store refuses in the middle of a run — another process holding SQLite's lock
past the busy timeout, a PostgreSQL server whose disk is full or that restarts — leaves the
thread whole: the run fails (or is interrupted, when even its end cannot be written) and
resumes, and the thread's next run works."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from bloge import (
    AgentLoopOperator,
    AgentRunError,
)
from bloge.store import RecordedRuns, RunStatus, Store, StoreError, open_store, ops
from bloge.store import recorder as recorder_module
from tests.store.conftest import POSTGRES_DSN, postgres_or_skip
from tests.store.lookup_agent import lookup_agent
from tests.store.probes import ProbedWriter


class Fault:
    """A fault of the store's database that a lookup arms; ``release`` ends it."""

    def __init__(self, arm: Callable[[], None], release: Callable[[], None]) -> None:
        self.arm, self.release = arm, release
        self.armed = False

    def lookup(self, input: dict) -> dict:
        if not self.armed:
            self.armed = True
            self.arm()
        return {"found": input["q"]}


@pytest.fixture
def fault(durable_store_url: str, tmp_path: Path) -> Iterator[Fault]:
    if durable_store_url.startswith("sqlite"):
        holder = sqlite3.connect(tmp_path / "bloge.db", isolation_level=None,
                                 check_same_thread=False)
        yield Fault(lambda: holder.execute("BEGIN EXCLUSIVE"),
                    lambda: holder.in_transaction and holder.execute("ROLLBACK"))
        holder.close()
        return
    postgres_or_skip()
    import psycopg  # noqa: PLC0415 -- an extra, there once postgres_or_skip() passed

    schema = durable_store_url.rsplit("=", 1)[1]
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'SET search_path TO "{schema}"')
        yield Fault(lambda: admin.execute("INSERT INTO disk_full VALUES (1)"),
                    lambda: admin.execute("DELETE FROM disk_full"))


async def prepared(url: str, fault: Fault) -> Store:
    """The store, with its schema; on PostgreSQL, a trigger that fails every insert of a
    message while the fault is armed, as a server out of disk does (SQLSTATE 53100)."""
    store = open_store(url, busy_timeout=0.05)
    await store.migrate()
    if url.startswith("postgresql"):
        import psycopg  # noqa: PLC0415 -- an extra, there once postgres_or_skip() passed

        schema = url.rsplit("=", 1)[1]
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            admin.execute(f'SET search_path TO "{schema}"')
            admin.execute("CREATE TABLE disk_full (armed int)")
            admin.execute(
                "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF EXISTS (SELECT 1 FROM disk_full) THEN RAISE EXCEPTION 'could not extend "
                "file: No space left on device' USING ERRCODE = '53100'; END IF; "
                "RETURN NEW; END $$")
            admin.execute("CREATE TRIGGER disk_full BEFORE INSERT ON bloge_messages "
                          "FOR EACH ROW EXECUTE FUNCTION disk_full()")
    return store


def released_after(writer: ProbedWriter, fault: Fault, failures: int) -> list[int]:
    """End the fault once ``failures`` writes failed; the list counts the failures."""
    failed: list[int] = []
    write = writer.write

    async def probed(batch: Sequence[ops.Op]) -> None:
        try:
            await write(batch)
        except StoreError:
            failed.append(1)
            if len(failed) == failures:
                fault.release()
            raise

    writer.write = probed  # type: ignore[method-assign]  # the test's probe
    return failed


def recording_through(writer: ProbedWriter, fault: Fault) -> AgentLoopOperator:
    """The lookup agent, arming ``fault``, its runs recorded through ``writer``."""
    return lookup_agent(RecordedRuns(writer.store, writer=writer), lookup=fault.lookup)


def failing_for(store: Store, fault: Fault, failures: int) -> AgentLoopOperator:
    """The lookup agent on ``store``, whose ``fault`` ends once ``failures`` writes failed."""
    writer = ProbedWriter(store)
    released_after(writer, fault, failures)
    return recording_through(writer, fault)


async def test_a_failed_write_fails_the_run_and_leaves_the_thread_whole(
        durable_store_url: str, fault: Fault) -> None:
    store = await prepared(durable_store_url, fault)
    agent = failing_for(store, fault, 1)
    with pytest.raises(AgentRunError) as failed:
        await agent.aexecute("Find kb", thread_id="t1")
    run = await store.get_run(failed.value.run_id or "")
    assert run.status is RunStatus.FAILED
    assert run.error is not None
    assert run.error.type == "StoreError"
    after = await agent.aexecute("Again", thread_id="t1")  # before: no message 4
    assert after.content == "Found it."
    stored = await store.thread_messages("t1")
    assert [m.seq for m in stored] == list(range(1, len(stored) + 1))
    await store.aclose()


async def test_a_run_failed_by_a_write_resumes(durable_store_url: str, fault: Fault) -> None:
    store = await prepared(durable_store_url, fault)
    agent = failing_for(store, fault, 1)
    with pytest.raises(AgentRunError) as failed:
        await agent.aexecute("Find kb", thread_id="t1")
    output = await agent.aresume_run(failed.value.run_id or "")
    assert output.content == "Found it."
    assert [m.role for m in output.messages] == ["user", "assistant", "tool", "assistant"]
    await store.aclose()


async def test_a_run_whose_end_cannot_be_written_is_interrupted_and_resumes(
        durable_store_url: str, fault: Fault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "END_WRITE_PAUSES", ())
    store = await prepared(durable_store_url, fault)
    agent = failing_for(store, fault, 2)  # the batch, then the run's end
    with pytest.raises(AgentRunError) as failed:
        await agent.aexecute("Find kb", thread_id="t1")
    store.clock = lambda: time.time() + 3600  # long after the run's lease
    run = await store.get_run(failed.value.run_id or "")
    assert run.status is RunStatus.INTERRUPTED
    output = await agent.aresume_run(run.id)
    assert output.content == "Found it."
    assert (await agent.aexecute("Again", thread_id="t1")).content == "Found it."
    await store.aclose()


async def test_a_postgres_connection_lost_mid_run_leaves_the_thread_whole(
        postgres_schema: str) -> None:
    # What a PostgreSQL restart does to the pool's connections, to this store's alone.
    import psycopg  # noqa: PLC0415 -- an extra, there once postgres_or_skip() passed

    name = f"bloge_{postgres_schema}"
    url = f"{POSTGRES_DSN}?schema={postgres_schema}&application_name={name}"

    def restart() -> None:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            # Waiting until each backend is gone (PostgreSQL 14's timeout, in ms): else the
            # write may still reach a backend that has not yet ended.
            admin.execute("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                          "WHERE application_name = %s", (name,))

    store = open_store(url)
    fault = Fault(lambda: None, lambda: None)  # the tool ran: the restart comes next
    writer = ProbedWriter(store)
    write = writer.write
    restarted = False

    async def restarted_first(batch: Sequence[ops.Op]) -> None:
        # The restart, right before the run's first write after its tool ran, with nothing in
        # between that could use the pool (the restart blocks the event loop): the pool's
        # connections are dead when the write takes one, as after a real restart.
        nonlocal restarted
        if fault.armed and not restarted:
            restarted = True
            restart()
        await write(batch)

    writer.write = restarted_first  # type: ignore[method-assign]  # the test's probe
    failures = released_after(writer, fault, 1)
    agent = recording_through(writer, fault)
    failed_run: str | None = None
    try:
        await agent.aexecute("Find kb", thread_id="t1")
    except AgentRunError as failed:
        failed_run = failed.run_id
    assert restarted
    if failed_run is None:
        # The pool had replaced its dead connection before the write took one (its own
        # reconnection raced the run): nothing failed, which leaves the thread as whole.
        assert failures == []
    else:
        assert failures == [1]
        assert (await store.get_run(failed_run)).status is RunStatus.FAILED
        assert (await agent.aresume_run(failed_run)).content == "Found it."
    assert (await agent.aexecute("Again", thread_id="t1")).content == "Found it."
    stored = await store.thread_messages("t1")
    assert [m.seq for m in stored] == list(range(1, len(stored) + 1))
    await store.aclose()
