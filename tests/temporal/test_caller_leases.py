"""A caller waiting on its child workflow keeps its lease, as an in-process caller does: it
runs no activity while it waits, so its child's activities renew its lease with their own.
Past the lease it is still running, and another run on its thread is refused; a cancel asked
of it in the store still cancels it (and so its child). With the child on a thread of its
own (``waiter``) and on its caller's (``sharer``), see tests/temporal/agents.py: the child
``stayer`` calls ``hold``, then ``gate``, which each hold until the test releases them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge import Agent
from bloge.agent.runtime import child_run_id
from bloge.llm import ScriptedProvider
from bloge.store import RunStatus, Store, ThreadBusyError
from bloge.temporal import (
    RunCancelledError,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    served_agents,
)
from tests.temporal import agents
from tests.temporal.test_agent_calls import _replays

#: The bound on waiting for a step of a run (a failing test, not a slow one).
WAIT_SECONDS = 60


class Ahead:
    """A store's clock that a test moves on: the time, plus ``ahead`` seconds."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@dataclass(frozen=True, slots=True)
class Serving:
    """The test agents on a worker of the test's task queue, with ``store``; ``hold`` and
    ``gate`` the tools ``stayer`` holds in."""

    runner: TemporalRunner
    store: Store
    hold: agents.Hold
    gate: agents.Gate

    async def outlived(self, clock: Ahead) -> None:
        """Once the child holds in ``hold``: the store's clock moves past every lease, then
        the child goes on to ``gate`` (its ``hold`` call's end renews the leases, past
        that point)."""
        assert await asyncio.to_thread(self.hold.entered.wait, WAIT_SECONDS)
        clock.ahead += 2 * self.store.lease
        self.hold.release.set()
        assert await asyncio.to_thread(self.gate.entered.wait, WAIT_SECONDS)


@asynccontextmanager
async def serving(client: Client, task_queue: str, tmp_path: Path,
                  store: Store) -> AsyncIterator[Serving]:
    registry = agents.registry(tmp_path / "count.log", hang_gate=True)
    hold, gate = registry.get("Hold"), registry.get("Gate")
    assert isinstance(hold, agents.Hold)
    assert isinstance(gate, agents.Gate)
    # A short heartbeat: a renewal every third of a second, which reads a cancel's ask.
    options = TemporalOptions(task_queue=task_queue, heartbeat_timeout=1.0)
    served = served_agents(agents.definitions(registry), registry, options)
    try:
        async with agent_worker(client, served, options, store=store):
            yield Serving(TemporalRunner(client, task_queue), store, hold, gate)
    finally:
        hold.release.set()
        gate.release.set()


@pytest.mark.parametrize("caller", ["waiter", "sharer"], ids=["fresh", "parent"])
async def test_a_caller_waiting_past_its_lease_on_its_child_keeps_its_thread(
        caller: str, client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    clock = Ahead()
    store.clock = clock
    async with serving(client, task_queue, tmp_path, store) as served:
        run_id = f"waits-{caller}"
        handle = await served.runner.start(caller, "wait x", run_id=run_id)
        await served.outlived(clock)
        run = await store.get_run(run_id)
        assert run.status is RunStatus.RUNNING
        assert run.lease_until is not None
        assert run.lease_until > clock()
        thread = await store.get_thread(run.thread_id)
        assert thread.active_run_id == run_id
        other = Agent(ScriptedProvider("Hi."), name="other", store=store)
        with pytest.raises(ThreadBusyError):
            await other.arun_output("Hello?", thread_id=run.thread_id)
        served.gate.release.set()
        output = await served.runner.result(handle.id)
        child = child_run_id(f"{run_id}:1:s1") or ""
        for replayed in (run_id, child):
            await _replays(client, replayed, task_queue)
    assert output.content == "waited: stayed: held x | opened x"
    for ended in (run_id, child):
        assert (await store.get_run(ended)).status is RunStatus.SUCCEEDED
    child_run = await store.get_run(child)
    assert (child_run.thread_id == run.thread_id) is (caller == "sharer")


@pytest.mark.parametrize("caller", ["waiter", "sharer"], ids=["fresh", "parent"])
async def test_a_cancel_asked_of_a_waiting_caller_in_the_store_cancels_it(
        caller: str, client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    async with serving(client, task_queue, tmp_path, store) as served:
        run_id = f"cancels-{caller}"
        handle = await served.runner.start(caller, "wait c", run_id=run_id)
        assert await asyncio.to_thread(served.hold.entered.wait, WAIT_SECONDS)
        await store.cancel_run(run_id)  # what bloge runs cancel and the server do
        async with asyncio.timeout(WAIT_SECONDS):
            with pytest.raises(RunCancelledError):
                await served.runner.result(handle.id)
    run = await store.get_run(run_id)
    assert (run.status, run.exit_reason) == (RunStatus.CANCELLED, "cancelled")
    # Its child was cancelled with it, as an in-process caller's sub-agent is.
    assert (await store.get_run(child_run_id(f"{run_id}:1:s1") or "")).status is (
        RunStatus.CANCELLED)


async def test_a_cancel_asked_of_the_child_alone_leaves_its_caller_running(
        client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    async with serving(client, task_queue, tmp_path, store) as served:
        handle = await served.runner.start("waiter", "wait d", run_id="waits-3")
        assert await asyncio.to_thread(served.hold.entered.wait, WAIT_SECONDS)
        child = child_run_id("waits-3:1:s1") or ""
        await store.cancel_run(child)
        async with asyncio.timeout(WAIT_SECONDS):
            output = await served.runner.result(handle.id)
    # The call failed, and the caller's model answered with that.
    assert output.content.startswith("waited: Error: tool 'stay' failed: ")
    assert "cancelled" in output.content
    assert (await store.get_run("waits-3")).status is RunStatus.SUCCEEDED
    assert (await store.get_run(child)).status is RunStatus.CANCELLED
