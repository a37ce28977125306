"""Approvals on Temporal: a run whose call waits for approval pauses its workflow (no worker
held), is stored as ``awaiting_approval`` with its pending call, and goes on when the call is
decided through the store — approved, denied, or expired."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from bloge import AgentLoopOperator, RunPaused
from bloge.core.context import OperatorContext, Principal
from bloge.store import (
    ApprovalConflictError,
    RunStatus,
    Store,
    decide_call,
    pending_approvals,
)
from bloge.temporal import TemporalRunner
from tests.server.live_server import LiveServer
from tests.temporal.conftest import StoredAgents, streamed_kinds

pytestmark = pytest.mark.usefixtures("temporal_server")


@pytest.fixture
def guarded(worked: StoredAgents) -> AgentLoopOperator:
    """The ``guarded`` agent (its ``count`` needs approval) run on a worker with ``store``."""
    return worked.operator("guarded")


ALICE = OperatorContext.root(principal=Principal("alice"))


async def _paused(operator: AgentLoopOperator, run_id: str) -> RunPaused:
    with pytest.raises(RunPaused) as caught:
        await operator.aexecute("hello", ALICE, run_id=run_id)
    return caught.value


async def test_a_paused_run_waits_in_the_store_and_an_approval_continues_it(
        guarded: AgentLoopOperator, store: Store, tmp_path: Path) -> None:
    paused = await _paused(guarded, "run-approve")
    assert paused.run_id == "run-approve"
    assert paused.status == "awaiting_approval"
    assert [(call.call_id, call.tool) for call in paused.pending] == [("c1", "count")]
    run = await store.get_run("run-approve")
    assert run.status is RunStatus.AWAITING_APPROVAL
    assert run.worker is None
    (waiting,) = run.pending_approvals
    assert (waiting.call_id, waiting.tool, waiting.requested_by) == ("c1", "count", "alice")
    assert [row.call_id for row in await pending_approvals(store, run_id="run-approve")] == [
        "c1"]
    assert not (tmp_path / "count.log").exists()  # nothing ran that waits
    decided = await decide_call(store, "run-approve", "c1", approve=True, principal="bob",
                                hash=waiting.hash)
    assert decided.remaining == 0
    output = await guarded.aresume_run("run-approve", ALICE)
    assert output.content.startswith("answer: counted hello | ")
    assert output.run_id == "run-approve"
    assert (tmp_path / "count.log").read_text().splitlines() == ["run-approve:1:c1"]
    run = await store.get_run("run-approve")
    assert run.status is RunStatus.SUCCEEDED
    events = [event.type for event in await store.run_events("run-approve")]
    assert events.index("approval_required") < events.index("approval_decided") \
        < events.index("done")
    # Decided once: a second decision is a conflict.
    with pytest.raises(ApprovalConflictError):
        await decide_call(store, "run-approve", "c1", approve=False, principal="bob")


async def test_a_denial_reaches_the_model(guarded: AgentLoopOperator, store: Store,
                                          tmp_path: Path) -> None:
    await _paused(guarded, "run-deny")
    output = await guarded.aresume_run("run-deny", ALICE, decisions={
        "c1": False})
    assert "denied" in output.content
    assert not (tmp_path / "count.log").exists()
    assert (await store.get_run("run-deny")).status is RunStatus.SUCCEEDED


async def test_an_expired_request_counts_as_denied(guarded: AgentLoopOperator, store: Store,
                                                   client: Client, task_queue: str,
                                                   tmp_path: Path) -> None:
    # Expired as soon as it is requested: the workflow's timer denies it, and the run goes
    # on by itself.
    store.approval_expiry = 0.0
    output = await TemporalRunner(client, task_queue, store=store).run(
        "guarded", "hello", run_id="run-expire")
    assert "expired" in output.content
    assert not (tmp_path / "count.log").exists()
    events = [event.type for event in await store.run_events("run-expire")]
    assert "approval_expired" in events
    assert (await store.get_run("run-expire")).status is RunStatus.SUCCEEDED


async def test_a_decision_over_http_continues_the_run_on_its_workflow(
        worked: StoredAgents) -> None:
    with LiveServer(worked.app("guarded")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            started = await http.post(server.url("/agents/guarded/runs"),
                                      json={"input": "hello"})
            assert started.status_code == 202, started.text
            paused = started.json()
            assert paused["status"] == "awaiting_approval"
            assert [p["call_id"] for p in paused["pending_approvals"]] == ["c1"]
            run_id = paused["id"]
            shown = (await http.get(server.url(f"/runs/{run_id}"))).json()
            assert [p["tool"] for p in shown["pending_approvals"]] == ["count"]
            decided = await http.post(server.url(f"/runs/{run_id}/approvals/c1"),
                                      json={"approve": True})
            assert decided.json()["continued"] is True
            again = await http.post(server.url(f"/runs/{run_id}/approvals/c1"),
                                    json={"approve": False})
            assert again.status_code == 409
            kinds = await streamed_kinds(http, server.url(f"/runs/{run_id}/stream"),
                                         after=paused["events"])
            assert kinds[-1] == "done"
            ended = (await http.get(server.url(f"/runs/{run_id}"))).json()
    assert ended["status"] == "succeeded"
    assert ended["output"]["content"].startswith("answer: counted hello")


async def test_a_paused_run_holds_no_worker_and_another_one_continues_it(
        stored_agents: StoredAgents, store: Store, tmp_path: Path) -> None:
    operator = stored_agents.operator("guarded")
    async with stored_agents.worker():
        await _paused(operator, "run-moved")
    # No worker runs now: the decision is taken all the same, and a new worker replays the
    # waiting workflow and goes on.
    await decide_call(store, "run-moved", "c1", approve=True, principal="bob")
    async with stored_agents.worker():
        output = await operator.aresume_run("run-moved", ALICE)
    assert output.content.startswith("answer: counted hello | ")
    assert (tmp_path / "count.log").read_text().splitlines() == ["run-moved:1:c1"]
