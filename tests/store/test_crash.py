"""A run killed with SIGKILL in the middle of a tool round resumes from its last completed
step: completed calls are not run again; a call that was running runs again only when its
operator is idempotent, and otherwise the model hears that its outcome is unknown."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bloge.store import RunStatus, Store, ThreadBusyError
from tests.processes import said_until
from tests.store.conftest import CRASH_CHILD, ROOT, lines
from tests.store.crash_child import shop


async def interrupted(store: Store) -> str:
    store.clock = lambda: time.time() + 3600  # long after the dead worker's lease
    (run,) = await store.list_runs()
    assert run.status is RunStatus.INTERRUPTED
    return run.id


async def test_a_killed_run_is_shown_interrupted(durable_store_url: str, killed_run: Path) -> None:
    _, store = shop(durable_store_url, killed_run, hang=False)
    await interrupted(store)
    await store.aclose()


async def test_resuming_a_killed_run_runs_no_completed_call_again(
        durable_store_url: str, killed_run: Path) -> None:
    agent, store = shop(durable_store_url, killed_run, hang=False)
    output = await agent.aresume_run(await interrupted(store))
    assert output.content == "Done."
    assert lines(killed_run, "lookup") == ["a", "b"]
    await store.aclose()


async def test_a_call_of_unknown_outcome_runs_again_only_when_idempotent(
        durable_store_url: str, killed_run: Path) -> None:
    agent, store = shop(durable_store_url, killed_run, hang=False)
    output = await agent.aresume_run(await interrupted(store))
    assert lines(killed_run, "ship") == ["book"]
    assert lines(killed_run, "refresh") == ["cache", "cache"]
    tool_messages = {m.tool_call_id: m for m in output.messages if m.role == "tool"}
    assert tool_messages["c3"].is_error
    assert "outcome of tool 'ship' is unknown" in tool_messages["c3"].content
    assert tool_messages["c4"].content == "refreshed"
    assert (await store.get_run(output.run_id)).status is RunStatus.SUCCEEDED
    await store.aclose()


@contextlib.contextmanager
def hung_child(store_url: str, logs: Path) -> Iterator[None]:
    """The child, running until its second tool round hangs; killed afterwards."""
    with subprocess.Popen(
            [sys.executable, str(CRASH_CHILD), store_url, str(logs)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}) as child:
        try:
            assert said_until(child, bool, '"ready"') == ["ready"]
            yield
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)


async def test_a_thread_busy_in_another_process_is_refused_naming_its_run(
        durable_store_url: str, tmp_path: Path) -> None:
    with hung_child(durable_store_url, tmp_path):
        agent, store = shop(durable_store_url, tmp_path, hang=False)
        (running,) = await store.list_runs()
        assert running.status is RunStatus.RUNNING
        with pytest.raises(ThreadBusyError) as refused:
            await agent.aexecute("Ship another book", thread_id=running.thread_id)
        assert refused.value.run_id == running.id
        await store.aclose()
