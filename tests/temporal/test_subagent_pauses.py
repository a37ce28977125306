"""A child workflow whose call waits for approval on Temporal: it pauses in the store and
waits for its decision, its caller's workflow waits on it, and its callers are paused in the
store too, showing its calls — decided by either run's id, as a local caller's are (see
tests/store/test_subagent_pauses.py). ``overseer`` asks ``vetted``, whose ``count`` needs
approval (tests/temporal/agents.py)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from bloge import AgentLoopOperator, RunPaused
from bloge.agent.runtime import child_run_id
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import RunError
from bloge.store import RunStatus, Store, pending_approvals
from bloge.temporal import TemporalRunner
from tests.server.live_server import LiveServer
from tests.temporal.conftest import StoredAgents, streamed_kinds
from tests.temporal.test_agent_calls import _replays

ALICE = OperatorContext.root(principal=Principal("alice"))
ANSWER = "delegated: found: counted research pay | opened delegate pay"


@pytest.fixture
def overseer(worked: StoredAgents) -> AgentLoopOperator:
    """``overseer`` run on a worker with ``store``."""
    return worked.operator("overseer")


async def _paused(operator: AgentLoopOperator, run_id: str) -> RunPaused:
    with pytest.raises(RunPaused) as caught:
        await operator.aexecute("delegate pay", ALICE, run_id=run_id)
    return caught.value


async def test_a_child_workflow_that_waits_pauses_its_caller_showing_its_calls(
        overseer: AgentLoopOperator, store: Store, tmp_path: Path) -> None:
    paused = await _paused(overseer, "over-1")
    child = child_run_id("over-1:1:r1")
    assert (paused.run_id, paused.status) == ("over-1", "awaiting_approval")
    assert [(call.call_id, call.tool, call.run_id) for call in paused.pending] == [
        ("n0", "count", child)]
    caller = await store.get_run("over-1")
    assert caller.status is RunStatus.AWAITING_APPROVAL
    assert [(row.call_id, row.run_id) for row in caller.pending_approvals] == [("n0", child)]
    assert [row.call_id for row in await pending_approvals(store, run_id="over-1")] == ["n0"]
    assert (await store.get_run(child)).status is RunStatus.AWAITING_APPROVAL
    waited = [e.body for e in await store.run_events("over-1") if e.type == "subagent_paused"]
    assert [(w["call_id"], w["tool"], w["run_id"]) for w in waited] == [("r1", "research", child)]
    assert not (tmp_path / "count.log").exists()


async def test_deciding_by_the_callers_id_continues_the_child_and_its_caller(
        overseer: AgentLoopOperator, store: Store, client: Client, task_queue: str,
        tmp_path: Path) -> None:
    await _paused(overseer, "over-2")
    output = await overseer.aresume_run("over-2", ALICE, decisions={"n0": True})
    assert output.content == ANSWER
    child = child_run_id("over-2:1:r1")
    assert (tmp_path / "count.log").read_text().splitlines() == [f"{child}:1:n0"]
    for run_id in ("over-2", child):
        assert (await store.get_run(run_id)).status is RunStatus.SUCCEEDED
    await _replays(client, "over-2", task_queue)
    await _replays(client, child, task_queue)


async def test_a_denial_reaches_the_childs_model(overseer: AgentLoopOperator,
                                                 store: Store, tmp_path: Path) -> None:
    await _paused(overseer, "over-3")
    output = await overseer.aresume_run("over-3", ALICE, decisions={"n0": False})
    assert output.content.startswith("delegated: found: ")
    assert "denied" in output.content
    assert not (tmp_path / "count.log").exists()


async def test_an_expired_approval_in_the_child_lets_its_caller_go_on(
        overseer: AgentLoopOperator, store: Store, client: Client, task_queue: str) -> None:
    # Expired as soon as it is requested: the child's timer denies it, and both runs go on
    # by themselves (nobody resumes anything).
    store.approval_expiry = 0.0
    output = await TemporalRunner(client, task_queue, store=store).run(
        "overseer", "delegate pay", run_id="over-4")
    assert "expired" in output.content
    assert (await store.get_run("over-4")).status is RunStatus.SUCCEEDED


@pytest.mark.parametrize("by", ["caller", "child"])
async def test_a_decision_over_http_continues_the_caller(by: str,
                                                        worked: StoredAgents) -> None:
    with LiveServer(worked.app("overseer")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            started = await http.post(server.url("/agents/overseer/runs"),
                                      json={"input": "delegate pay"})
            assert started.status_code == 202, started.text
            paused = started.json()
            caller = paused["id"]
            child = child_run_id(f"{caller}:1:r1")
            assert paused["status"] == "awaiting_approval"
            assert [(p["call_id"], p["run_id"]) for p in paused["pending_approvals"]] == [
                ("n0", child)]
            holder = caller if by == "caller" else child
            decided = await http.post(server.url(f"/runs/{holder}/approvals/n0"),
                                      json={"approve": True})
            assert decided.status_code == 200, decided.text
            assert decided.json()["stream"] == f"/runs/{caller}/stream"
            kinds = await streamed_kinds(http, server.url(f"/runs/{caller}/stream"),
                                         after=paused["events"])
            assert kinds[-1] == "done"
            ended = (await http.get(server.url(f"/runs/{caller}"))).json()
    assert ended["status"] == "succeeded"
    assert ended["output"]["content"] == ANSWER


async def test_a_caller_cancelled_while_its_child_waits_is_recorded_cancelled(
        overseer: AgentLoopOperator, store: Store, client: Client, task_queue: str) -> None:
    await _paused(overseer, "over-5")
    runner = TemporalRunner(client, task_queue)
    await runner.cancel("over-5")
    with pytest.raises(RunError):
        await runner.result("over-5")
    assert (await store.get_run("over-5")).status is RunStatus.CANCELLED
