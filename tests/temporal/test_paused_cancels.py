"""Cancelling a paused run on Temporal: the store says it is cancelled at once, as a paused
local run's record does, and its workflow — which waits for answers, held by no worker —
ends cancelled too (with the child workflow it waits on, for a caller), so that nothing
waits on a run that is over; an answer given afterwards is refused as for a local run.
``bloge runs cancel`` and ``bloge serve`` cancel through the Temporal run store
(``TemporalRunStore.cancel_run``)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bloge import AgentLoopOperator, RunPaused
from bloge.agent.runtime import child_run_id
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import BlogeUsageError
from bloge.store import ApprovalConflictError, RunStatus, Store, decide_call, pending_approvals
from tests.server.live_server import LiveServer
from tests.temporal.conftest import StoredAgents, ended_cancelled

ALICE = OperatorContext.root(principal=Principal("alice"))
REFUSED = "is cancelled, not waiting for decisions or tool results"


async def _paused(operator: AgentLoopOperator, run_id: str, question: str) -> RunPaused:
    with pytest.raises(RunPaused) as caught:
        await operator.aexecute(question, ALICE, run_id=run_id)
    return caught.value


async def test_cancelling_a_run_waiting_for_approval_cancels_its_workflow(
        worked: StoredAgents, store: Store, tmp_path: Path) -> None:
    await _paused(worked.operator("guarded"), "wait-1", "hello")
    cancelled = await worked.runs().cancel_run("wait-1")
    assert cancelled.status is RunStatus.CANCELLED
    await ended_cancelled(worked.client, worked.task_queue, "wait-1")
    assert (await store.get_run("wait-1")).status is RunStatus.CANCELLED
    assert await pending_approvals(store) == []
    with pytest.raises(ApprovalConflictError, match=REFUSED):
        await decide_call(store, "wait-1", "c1", approve=True, principal="bob")
    assert not (tmp_path / "count.log").exists()
    with pytest.raises(BlogeUsageError, match=(
            r"run 'wait-1' is cancelled and ran on Temporal, where it kept no checkpoint "
            r"to go on from \(it ended while it waited, or before its first turn\); go on "
            r"with its conversation in a new run on its thread \(bloge run guarded --thread "
            r"\w+")):
        await worked.operator("guarded").aresume_run("wait-1", ALICE)


async def test_cancelling_a_waiting_caller_cancels_it_and_the_child_it_waits_on(
        worked: StoredAgents, store: Store, tmp_path: Path) -> None:
    await _paused(worked.operator("overseer"), "wait-2", "delegate pay")
    child = child_run_id("wait-2:1:r1")
    cancelled = await worked.runs().cancel_run("wait-2")
    assert cancelled.status is RunStatus.CANCELLED
    await ended_cancelled(worked.client, worked.task_queue, "wait-2")
    await ended_cancelled(worked.client, worked.task_queue, child)
    assert (await store.get_run("wait-2")).status is RunStatus.CANCELLED
    assert (await store.get_run(child)).status is RunStatus.CANCELLED
    assert await pending_approvals(store) == []
    with pytest.raises(ApprovalConflictError, match=REFUSED):
        await decide_call(store, "wait-2", "n0", approve=True, principal="bob")
    assert not (tmp_path / "count.log").exists()


async def test_a_cancel_over_http_cancels_the_workflow_and_refuses_a_later_decision(
        worked: StoredAgents, store: Store) -> None:
    with LiveServer(worked.app("guarded")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            started = await http.post(server.url("/agents/guarded/runs"),
                                      json={"input": "hello"})
            assert started.status_code == 202, started.text
            run_id = started.json()["id"]
            cancelled = await http.post(server.url(f"/runs/{run_id}/cancel"))
            assert cancelled.status_code == 200, cancelled.text
            assert cancelled.json()["status"] == "cancelled"
            await ended_cancelled(worked.client, worked.task_queue, run_id)
            decided = await http.post(server.url(f"/runs/{run_id}/approvals/c1"),
                                      json={"approve": True})
    assert decided.status_code == 409
    assert REFUSED in decided.text
    assert (await store.get_run(run_id)).status is RunStatus.CANCELLED
