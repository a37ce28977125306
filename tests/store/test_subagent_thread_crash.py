"""A parent killed with SIGKILL while its sub-agents run on its thread (``thread =
"parent"``) resumes without running a finished child again, takes up the child that was
running on the same thread, and numbers the thread's messages without a collision."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge.store import RunStatus
from tests.store.conftest import killed_when_ready, lines
from tests.store.fanout_child import triage
from tests.store.test_subagent_crash import FANOUT_CHILD, parent_run


@pytest.fixture
def killed_on_its_thread(durable_store_url: str, tmp_path: Path) -> Path:
    """``fanout_child.py`` with its researchers on its thread ran until researcher c hung
    with a and b answered and recorded, and was killed there with SIGKILL."""
    killed_when_ready(FANOUT_CHILD, durable_store_url, str(tmp_path), "parent")
    return tmp_path


async def test_a_killed_parent_resumes_its_children_on_its_thread_without_running_one_again(
        durable_store_url: str, killed_on_its_thread: Path) -> None:
    parent, store = triage(durable_store_url, killed_on_its_thread, hang=False,
                           thread="parent")
    run_id = await parent_run(store)
    run = await store.get_run(run_id)
    before = {child.id for child in await store.child_runs(run_id)}
    output = await parent.aresume_run(run_id)
    assert output.content == "answer a; answer b; answer c"
    assert sorted(lines(killed_on_its_thread, "answered")) == ["a", "b", "c"]
    children = await store.child_runs(run_id)
    assert {child.id for child in children} == before
    assert len(children) == 3
    assert all(child.status is RunStatus.SUCCEEDED for child in children)
    assert all(child.thread_id == run.thread_id for child in children)
    log = await store.thread_messages(run.thread_id)
    assert len({m.seq for m in log}) == len(log)
    assert {m.run_id for m in log} == {run_id, *before}
    thread = await store.get_thread(run.thread_id)
    assert thread.last_run_id == run_id
    await store.aclose()
