"""``bloge run`` on Temporal says so when no worker takes its run (the workflow waits)."""

from __future__ import annotations

from bloge import LlmMessage
from bloge.store import StoreWriter, open_store
from bloge_container.cli.temporal_run import waiting_for_a_worker


async def test_a_run_no_worker_takes_is_told_once() -> None:
    said: list[str] = []
    async with open_store("memory://") as store:
        await waiting_for_a_worker(store, "run-1", lambda: said.append("hint"), after=0.05)
    assert said == ["hint"]


async def test_a_run_a_worker_has_started_is_not() -> None:
    said: list[str] = []
    async with open_store("memory://") as store:
        await StoreWriter(store).start_run(run_id="run-1", thread_id="thread-1", agent_id="support",
                              input=[LlmMessage.user("hi")], metadata=None, worker="w-1")
        await waiting_for_a_worker(store, "run-1", lambda: said.append("hint"), after=3600)
    assert said == []
