"""The begin activity's side in the run store: a start that Temporal retries after its first
attempt wrote it (a store error after the write, or a worker gone before the activity's end
reached the service) takes the run back, rather than find its own run holding the thread and
fail the workflow with ``ThreadBusyError``."""

from __future__ import annotations

from typing import Any

import pytest

from bloge.llm import LlmMessage
from bloge.store import RunStatus, Store
from bloge.temporal.recording import StoreRecording

FIRST, OTHER = "first:1:1:x", "other:1:1:x"


async def _begin(store: Store, worker: str) -> dict[str, Any]:
    """The begin activity's start of ``run-1`` on ``worker``."""
    return await StoreRecording(store, worker=worker).begin(
        run_id="run-1", thread_id="thread-1", agent_id="counter",
        input=[LlmMessage.user("hello")], metadata={})


@pytest.mark.parametrize("retrier", [FIRST, OTHER], ids=["same-worker", "another-worker"])
async def test_a_retried_start_takes_its_run_back_while_the_first_attempts_lease_holds(
        store: Store, retrier: str) -> None:
    begun = await _begin(store, FIRST)
    assert await _begin(store, retrier) == begun
    run = await store.get_run("run-1")
    assert (run.status, run.worker) == (RunStatus.RUNNING, retrier)
    assert (await store.get_thread("thread-1")).active_run_id == "run-1"
