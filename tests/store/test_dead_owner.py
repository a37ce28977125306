"""A run whose process died on this host is interrupted at once — listed so, resumed, its
thread free — instead of when its lease ends; a run of another host keeps its lease."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge.store import RunStatus, Store, StoreWriter, ThreadBusyError, owner
from tests.store.crash_child import shop


async def test_a_run_whose_process_died_is_listed_interrupted_at_once(
        durable_store_url: str, killed_run: Path) -> None:
    _, store = shop(durable_store_url, killed_run, hang=False)
    (run,) = await store.list_runs()
    assert run.status is RunStatus.INTERRUPTED
    assert [r.id for r in await store.list_runs(status=RunStatus.INTERRUPTED)] == [run.id]
    assert await store.list_runs(status=RunStatus.RUNNING) == []
    assert (await store.get_run(run.id)).status is RunStatus.INTERRUPTED
    await store.aclose()


async def test_a_run_whose_process_died_resumes_at_once(
        durable_store_url: str, killed_run: Path) -> None:
    agent, store = shop(durable_store_url, killed_run, hang=False)
    (run,) = await store.list_runs()
    output = await agent.aresume_run(run.id)  # before: the thread is busy for 30 s
    assert output.content == "Done."
    assert (await store.get_run(run.id)).status is RunStatus.SUCCEEDED
    await store.aclose()


async def test_the_thread_of_a_run_whose_process_died_takes_a_new_run_at_once(
        durable_store_url: str, killed_run: Path) -> None:
    agent, store = shop(durable_store_url, killed_run, hang=False)
    (run,) = await store.list_runs()
    output = await agent.aexecute("Ship another book", thread_id=run.thread_id)
    assert output.content == "Done."
    await store.aclose()


async def started_by(store: Store, worker: str) -> str:
    await StoreWriter(store).start_run(run_id="r1", thread_id="t1", agent_id="shop", input=(),
                          metadata=None, worker=worker)
    return "r1"


@pytest.mark.parametrize("worker", [
    f"elsewhere:999999999:1:{owner.SCOPE}",  # another host: its processes are not ours to judge
    owner.this_worker(),  # a process that lives
    "temporal:shop",  # not a process at all
], ids=["other-host", "alive", "task-queue"])
async def test_a_run_whose_owner_is_not_known_dead_keeps_its_lease(
        store: Store, worker: str) -> None:
    run_id = await started_by(store, worker)
    assert (await store.get_run(run_id)).status is RunStatus.RUNNING
    assert [r.id for r in await store.list_runs(status=RunStatus.RUNNING)] == [run_id]
    with pytest.raises(ThreadBusyError):
        await StoreWriter(store).reclaim_run(await store.get_run(run_id), worker="me:1:1:x")


async def test_of_two_resuming_a_run_whose_process_died_one_does(store: Store) -> None:
    dead = f"{owner.HOST}:999999999:1:{owner.SCOPE}"  # no process has this pid
    run = await store.get_run(await started_by(store, dead))
    assert run.status is RunStatus.INTERRUPTED
    await StoreWriter(store).reclaim_run(run, worker="first:1:1:x")
    with pytest.raises(ThreadBusyError):
        await StoreWriter(store).reclaim_run(run, worker="second:1:1:x")
