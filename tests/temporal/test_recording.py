"""The begin activity's side in the run store: a start that Temporal retries after its first
attempt wrote it (a store error after the write, or a worker gone before the activity's end
reached the service) takes the run back, rather than find its own run holding the thread and
fail the workflow with ``ThreadBusyError``."""

from __future__ import annotations

from typing import Any

import pytest

from bloge.agent import AgentUsage, PendingCall
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


async def test_a_retried_pause_reads_back_the_expiries_of_its_own_calls_not_a_sub_agents(
        store: Store) -> None:
    # The caller paused on its own call c1; its sub-agent's run, which asked a c1 of its own,
    # paused too. The caller's pause, tried again, reads back when its own c1 expires.
    recording = StoreRecording(store, worker=FIRST)
    await _begin(store, FIRST)
    await recording.begin(run_id="run-2", thread_id="thread-2", agent_id="helper",
                          input=[LlmMessage.user("hi")], metadata={}, parent_run_id="run-1")
    caller = PendingCall("c1", "refund", "{}", "approval", "h1", 100.0, expires_at=500.0)
    child = PendingCall("c1", "wire", "{}", "approval", "h2", 100.0, expires_at=900.0)

    async def pause(run_id: str, call: PendingCall) -> dict[str, float | None]:
        return await recording.pause(run_id=run_id, turn=1, status="awaiting_approval",
                                     calls=[call], turns=1, usage=AgentUsage())

    assert await pause("run-1", caller) == {"c1": 500.0}
    assert await pause("run-2", child) == {"c1": 900.0}
    assert await pause("run-1", caller) == {"c1": 500.0}
