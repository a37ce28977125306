"""A parent killed with SIGKILL while its sub-agents run resumes without running a finished
child again, and takes up the child that was running where it stopped."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bloge.store import RunStatus, Store
from tests.store.conftest import killed_when_ready, lines
from tests.store.fanout_child import triage

FANOUT_CHILD = Path(__file__).with_name("fanout_child.py")


@pytest.fixture
def killed_fanout(durable_store_url: str, tmp_path: Path) -> Path:
    """``fanout_child.py`` ran until researcher c hung with a and b answered and recorded,
    and was killed there with SIGKILL."""
    killed_when_ready(FANOUT_CHILD, durable_store_url, str(tmp_path))
    return tmp_path


async def parent_run(store: Store) -> str:
    store.clock = lambda: time.time() + 3600  # long after the dead worker's leases
    (run,) = [run for run in await store.list_runs() if run.parent_run_id is None]
    assert run.status is RunStatus.INTERRUPTED
    return run.id


async def test_a_killed_parent_resumes_without_running_a_finished_child_again(
        durable_store_url: str, killed_fanout: Path) -> None:
    parent, store = triage(durable_store_url, killed_fanout, hang=False)
    output = await parent.aresume_run(await parent_run(store))
    assert output.content == "answer a; answer b; answer c"
    assert sorted(lines(killed_fanout, "answered")) == ["a", "b", "c"]
    await store.aclose()


async def test_a_killed_parent_takes_up_its_running_child_in_the_same_run(
        durable_store_url: str, killed_fanout: Path) -> None:
    parent, store = triage(durable_store_url, killed_fanout, hang=False)
    run_id = await parent_run(store)
    before = {child.id for child in await store.child_runs(run_id)}
    await parent.aresume_run(run_id)
    children = await store.child_runs(run_id)
    assert {child.id for child in children} == before
    assert len(children) == 3
    assert all(child.status is RunStatus.SUCCEEDED for child in children)
    assert all(child.parent_run_id == run_id for child in children)
    await store.aclose()
