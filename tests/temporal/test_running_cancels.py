"""Cancelling a running run on Temporal reaches its workflow at once, as a local run's
cancel reaches its task: ``TemporalRunStore.cancel_run`` (``bloge runs cancel``, ``bloge
serve``) cancels the workflow, which ends ``cancelled`` in the store as a local run does,
rather than when its worker next renews the run's lease. The worker here renews it every
200 s (a third of its heartbeat timeout) and the lease lasts 600 s, so no renewal is what
stops the run: ``held`` holds in its ``hold`` call until the test ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge.store import RunStatus, open_store
from bloge.temporal import RunCancelledError
from tests.cli.conftest import app, bloge  # noqa: F401 -- app: a fixture
from tests.temporal import agents
from tests.temporal.conftest import DevServer, StoredAgents, ended_cancelled

#: Longer than any test: the worker renews a run's lease every third of it, and the lease
#: lasts as long.
SLOW_SECONDS = 600.0
#: The bound on waiting for the run to reach its tool (a failing test, not a slow one).
WAIT_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Holding:
    """The test agents on a worker of the test's task queue (``stored``); ``hold``, the tool
    ``held`` holds in."""

    stored: StoredAgents
    hold: agents.Hold

    async def started(self, run_id: str) -> asyncio.Task[object]:
        """A run of ``held`` as ``run_id``, once it holds in its tool call."""
        running: asyncio.Task[object] = asyncio.create_task(
            self.stored.operator("held").aexecute("hold on", run_id=run_id))
        assert await asyncio.to_thread(self.hold.entered.wait, WAIT_SECONDS)
        return running


async def _holding(client: Client, task_queue: str, address: str,
                   store_url: str, tmp_path: Path) -> AsyncIterator[Holding]:
    registry = agents.registry(tmp_path / "count.log")
    store = open_store(store_url, lease=SLOW_SECONDS)
    stored = StoredAgents(registry, agents.definitions(registry), store, client, task_queue,
                          address)
    hold: agents.Hold = registry.get("Hold")
    try:
        async with stored.worker(heartbeat_timeout=SLOW_SECONDS):
            yield Holding(stored, hold)
            hold.release.set()  # the cancelled call's thread, which nothing else ends
    finally:
        hold.release.set()
        await store.aclose()


@pytest.fixture
async def holding(client: Client, task_queue: str, temporal_server: DevServer,
                  tmp_path: Path) -> AsyncIterator[Holding]:
    async for serving in _holding(client, task_queue, temporal_server.address,
                                  f"sqlite:///{tmp_path / 'runs.db'}", tmp_path):
        yield serving


async def test_cancelling_a_running_run_cancels_its_workflow_at_once(
        holding: Holding, client: Client, task_queue: str) -> None:
    running = await holding.started("held-1")
    asked = await holding.stored.runs().cancel_run("held-1")
    assert asked.cancel_requested
    await ended_cancelled(client, task_queue, "held-1")
    with pytest.raises(RunCancelledError):
        await running
    run = await holding.stored.store.get_run("held-1")
    assert (run.status, run.exit_reason) == (RunStatus.CANCELLED, "cancelled")
    assert not holding.hold.release.is_set()  # its call still held: the cancel ended it


async def test_bloge_runs_cancel_stops_a_running_run_on_temporal_at_once(
        client: Client, task_queue: str, temporal_server: DevServer, app: Path,  # noqa: F811 -- app: the fixture
        on_temporal: dict[str, str], tmp_path: Path) -> None:
    (app / "var").mkdir(exist_ok=True)
    store_url = f"sqlite:///{app / 'var' / 'bloge.db'}"
    env = {**on_temporal, "BLOGE_STORE__URL": store_url}
    async for serving in _holding(client, task_queue, temporal_server.address, store_url,
                                  tmp_path):
        running = await serving.started("held-2")
        cancelled = await asyncio.to_thread(bloge, "runs", "cancel", "held-2", cwd=app,
                                            env=env)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.strip() == "run held-2: cancelled"
        await ended_cancelled(client, task_queue, "held-2")
        with pytest.raises(RunCancelledError):
            await running
        run = await serving.stored.store.get_run("held-2")
        assert (run.status, run.exit_reason) == (RunStatus.CANCELLED, "cancelled")
