"""A parent killed with SIGKILL while its sub-agents run resumes without running a finished
child again, and takes up the child that was running where it stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bloge.store import RunStatus, Store
from tests.store.conftest import ROOT
from tests.store.fanout_child import triage

FANOUT_CHILD = Path(__file__).with_name("fanout_child.py")


@pytest.fixture
def killed_fanout(durable_store_url: str, tmp_path: Path) -> Path:
    """``fanout_child.py`` ran until researcher c hung with a and b answered and recorded,
    and was killed there with SIGKILL."""
    with subprocess.Popen(
            [sys.executable, str(FANOUT_CHILD), durable_store_url, str(tmp_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        line = child.stdout.readline()  # blocks until c's tool hangs, or the child exits
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert line == "ready\n", child.stderr.read()
    return tmp_path


def lines(logs: Path, name: str) -> list[str]:
    path = logs / f"{name}.log"
    return path.read_text().splitlines() if path.exists() else []


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
