"""``Store.check``: threads and checkpoints that refer to messages the store lacks — what a
refused write left before the recorder kept such writes — are found, and mended so that the
thread's next run and the run's resume work."""

from __future__ import annotations

import time

import pytest

from bloge import AgentLoopOperator
from bloge.core.errors import BlogeError
from bloge.llm import FunctionProvider
from bloge.store import DanglingView, RunStatus, Store, StoreWriter, ops
from tests.store.lookup_agent import answer, lookup_agent


def helper(store: Store, provider: FunctionProvider) -> AgentLoopOperator:
    return lookup_agent(store, lookup=lambda input: {"found": "kb"}, provider=provider)


async def broken(store: Store, view: tuple[tuple[int, int], ...]) -> str:
    """A thread of four messages (user, tool call, result, answer) whose run then recorded
    ``view`` as its end, with a checkpoint at turn 3 — as a run whose batch was dropped did."""
    output = await helper(store, FunctionProvider(answer)).aexecute("Find kb", thread_id="t1")
    assert [m.seq for m in await store.thread_messages("t1")] == [1, 2, 3, 4]
    now = time.time()
    await StoreWriter(store).write([
        ops.SaveCheckpoint(output.run_id, 3, view, {}, now),
        ops.FinishRun(output.run_id, "t1", RunStatus.FAILED, "error", 3, {}, None,
                      {"type": "StoreError", "message": "locked"}, view, now)])
    return output.run_id


async def test_a_view_referring_to_missing_messages_is_found(store: Store) -> None:
    run_id = await broken(store, ((1, 6),))
    assert await store.check() == [DanglingView("t1", None, None, (5, 6)),
                                   DanglingView("t1", run_id, 3, (5, 6))]
    with pytest.raises(BlogeError, match=r"has no message 5.*bloge store check --repair"):
        await helper(store, FunctionProvider(answer)).aexecute("Again", thread_id="t1")


async def test_a_whole_store_has_nothing_to_mend(store: Store) -> None:
    await helper(store, FunctionProvider(answer)).aexecute("Find kb", thread_id="t1")
    assert await store.check(repair=True) == []


async def test_repair_lets_the_threads_next_run_and_the_runs_resume_work(store: Store) -> None:
    run_id = await broken(store, ((1, 6),))
    assert len(await store.check(repair=True)) == 2
    assert await store.check() == []
    provider = FunctionProvider(answer)
    assert (await helper(store, provider).aexecute("Again", thread_id="t1")).content == \
        "Found it."
    seen = [m.content for m in provider.requests[0].messages]
    assert seen == ["Find kb", "", '{"found":"kb"}', "Found it.", "Again"]
    resumed = await helper(store, FunctionProvider(answer)).aresume_run(run_id)
    assert resumed.content == "Found it."


async def test_repair_cuts_a_view_before_a_tool_call_whose_result_is_missing(
        store: Store) -> None:
    await broken(store, ((1, 2), (5, 5)))
    await store.check(repair=True)
    provider = FunctionProvider(answer)
    await helper(store, provider).aexecute("Again", thread_id="t1")
    assert [m.content for m in provider.requests[0].messages] == ["Find kb", "Again"]
