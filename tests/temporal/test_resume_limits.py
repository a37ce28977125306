"""New limits for a paused run on Temporal, as a local run resumed with them takes them
(``bloge runs resume --max-turns/--budget``): ``TemporalRunStore.go_on`` sends them to its
workflow with the answers, and the run goes on under them; a run started with limits
(``bloge run --max-turns/--budget``) keeps them. An operator's resume (``aresume_run``,
``POST /runs/{id}/resume``) sends its own, as a local resume goes on under them.
``guarded`` asks for its ``count``, which waits for approval, in turn 1 and answers in turn
2 (a second model call)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest

from bloge import AgentLoopOperator, AgentRunError, MaxTurnsExceededError, RunPaused
from bloge.agent import with_budget_limits
from bloge.core.errors import BlogeUsageError
from bloge.store import RunStatus, Store, decide_call
from bloge.temporal.patches import RESUME_LIMITS, UNPRICED_LIMITS
from tests.server.live_server import LiveServer
from tests.temporal.conftest import StoredAgents, within
from tests.temporal.test_workflow import _patches, _replayed

pytestmark = pytest.mark.usefixtures("temporal_server")

#: Why a usd limit on ``test-model`` is refused, in process too (it has no price).
UNPRICED = ("no price for model 'test-model', so a usd budget cannot be kept; add it to "
            "bloge.budgets.prices")


async def _approved(worked: StoredAgents, store: Store, run_id: str, **limits: Any) -> None:
    """A run of ``guarded`` started with ``limits``, paused at its call, which is approved."""
    runs = worked.runs()
    await (await runs.runner()).start("guarded", "hello", run_id=run_id, **limits)
    with pytest.raises(RunPaused):
        await runs.follow(run_id, None, None)
    await decide_call(store, run_id, "c1", approve=True, principal="bob")


async def test_a_run_started_with_max_turns_keeps_them_when_it_goes_on(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "turns-1", max_turns=1)
    with pytest.raises(MaxTurnsExceededError) as caught:
        await worked.runs().go_on("turns-1")
    assert caught.value.max_turns == 1
    assert (await store.get_run("turns-1")).exit_reason == "max_turns"


async def test_max_turns_given_to_a_paused_run_hold_as_it_goes_on(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "turns-2", max_turns=1)
    output = await worked.runs().go_on("turns-2", max_turns=2)
    assert output.content.startswith("answer: counted hello")
    assert output.turns_used == 2
    assert (await store.get_run("turns-2")).status is RunStatus.SUCCEEDED


async def test_a_run_started_with_a_budget_keeps_it_when_it_goes_on(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "budget-1", budget={"model_calls": 1})
    with pytest.raises(AgentRunError) as caught:
        await worked.runs().go_on("budget-1")
    assert caught.value.exit_reason == "budget"
    assert "model_calls" in str(caught.value)


async def test_a_budget_raised_for_a_paused_run_holds_as_it_goes_on(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "budget-2", budget={"model_calls": 1})
    output = await worked.runs().go_on("budget-2", budget={"model_calls": 2})
    assert output.content.startswith("answer: counted hello")
    assert (await store.get_run("budget-2")).status is RunStatus.SUCCEEDED


@pytest.mark.parametrize(("model_calls", "ends"), [(1, "budget"), (3, "stop")])
async def test_an_ended_run_resumed_by_an_operator_goes_on_under_its_run_budget(
        worked: StoredAgents, store: Store, model_calls: int, ends: str) -> None:
    # As POST /runs/{id}/resume with a "budget" resumes it: an operator with the limits. The
    # run has made one model call: a limit of 1 stops it at once, 3 lets it answer.
    await _approved(worked, store, "budget-3", budget={"model_calls": 1})
    with pytest.raises(AgentRunError):
        await worked.runs().go_on("budget-3")
    # Stopped before turn 2's model call, it counted turn 2 (as a local run does): the
    # operator allows a third.
    definition = replace(worked.definitions["guarded"], max_turns=3)
    resumed = AgentLoopOperator("guarded", with_budget_limits(
        definition, {"model_calls": model_calls}), worked.registry, store=worked.runs())
    if ends == "budget":
        with pytest.raises(AgentRunError) as caught:
            await resumed.aresume_run("budget-3")
        assert caught.value.exit_reason == "budget"
    else:
        assert (await resumed.aresume_run("budget-3")).content.startswith("answer: counted")
    assert (await store.get_run("budget-3")).exit_reason == ends


async def test_new_limits_for_a_caller_waiting_on_its_sub_agent_are_refused(
        worked: StoredAgents, store: Store) -> None:
    with pytest.raises(RunPaused):
        await worked.operator("overseer").aexecute("delegate pay", run_id="waits-1")
    with pytest.raises(BlogeUsageError, match=(
            r"run 'waits-1' waits on its sub-agent's run \(\w+\) on Temporal, where its "
            r"workflow is inside the round that asked it and takes no new limits "
            r"\(max_turns 9\) there")):
        await worked.runs().go_on("waits-1", max_turns=9)
    assert (await store.get_run("waits-1")).status is RunStatus.AWAITING_APPROVAL


async def test_a_usd_budget_on_a_model_without_a_price_is_refused_and_the_run_waits_on(
        worked: StoredAgents, store: Store) -> None:
    # As a local resume's ledger refuses it (with the same words), before the workflow is
    # sent anything: the run waits on, and goes on once resumed with limits it can keep.
    await _approved(worked, store, "unpriced-1", budget={"model_calls": 1})
    with pytest.raises(BlogeUsageError) as caught:
        await within(_limited(worked, budget={"usd": 1}).aresume_run("unpriced-1"),
                     "the refused resume")
    assert str(caught.value).startswith(UNPRICED)
    assert (await store.get_run("unpriced-1")).status is RunStatus.AWAITING_APPROVAL
    output = await within(_limited(worked, budget={"model_calls": 2}).aresume_run(
        "unpriced-1"), "the resume that goes on")
    assert output.content.startswith("answer: counted hello")
    assert (await store.get_run("unpriced-1")).status is RunStatus.SUCCEEDED


async def test_a_resume_refused_for_a_usd_budget_records_none_of_its_decisions(
        worked: StoredAgents, store: Store) -> None:
    runs = worked.runs()
    await (await runs.runner()).start("guarded", "hello", run_id="unpriced-3")
    with pytest.raises(RunPaused):
        await runs.follow("unpriced-3", None, None)
    with pytest.raises(BlogeUsageError) as caught:
        await within(_limited(worked, budget={"usd": 1}).aresume_run(
            "unpriced-3", decisions={"c1": False}), "the refused resume")
    assert str(caught.value).startswith(UNPRICED)
    run = await store.get_run("unpriced-3")
    assert run.status is RunStatus.AWAITING_APPROVAL
    assert [(p.call_id, p.state) for p in run.pending_approvals] == [("c1", "waiting")]


async def test_a_usd_budget_a_worker_cannot_price_fails_the_run_as_a_local_resume_does(
        worked: StoredAgents, store: Store) -> None:
    # Sent to the workflow by a client that did not refuse it (go_on knows no prices): the
    # run fails, resumable by its id, as a local resume's ledger fails it, rather than its
    # workflow task again and again; its history replays.
    await _approved(worked, store, "unpriced-2")
    with pytest.raises(AgentRunError) as caught:
        await within(worked.runs().go_on("unpriced-2", budget={"usd": 1}), "the run's end")
    assert str(caught.value).startswith(UNPRICED)
    assert caught.value.exit_reason == "error"
    run = await store.get_run("unpriced-2")
    assert (run.status, run.exit_reason) == (RunStatus.FAILED, "error")
    history = await worked.client.get_workflow_handle("unpriced-2").fetch_history()
    await _replayed(history, worked.client, worked.task_queue, "guarded")
    assert _patches(history) == [RESUME_LIMITS, UNPRICED_LIMITS]


def _limited(worked: StoredAgents, *, max_turns: int = 2,
             budget: dict[str, Any] | None = None) -> AgentLoopOperator:
    """``guarded``'s operator with ``max_turns`` and its run budget raised to ``budget``,
    as ``POST /runs/{id}/resume`` builds it for its body."""
    definition = with_budget_limits(replace(worked.definitions["guarded"],
                                            max_turns=max_turns), budget)
    return AgentLoopOperator("guarded", definition, worked.registry, store=worked.runs())


async def test_an_operator_resuming_a_paused_run_sends_it_its_max_turns(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "op-turns-1")  # started with the agent's 2 turns
    with pytest.raises(MaxTurnsExceededError) as caught:
        await _limited(worked, max_turns=1).aresume_run("op-turns-1")
    assert caught.value.max_turns == 1
    assert (await store.get_run("op-turns-1")).exit_reason == "max_turns"


async def test_an_operator_resuming_a_paused_run_sends_it_its_run_budget(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "op-budget-1", budget={"model_calls": 1})
    output = await _limited(worked, budget={"model_calls": 2}).aresume_run("op-budget-1")
    assert output.content.startswith("answer: counted hello")
    assert (await store.get_run("op-budget-1")).status is RunStatus.SUCCEEDED


async def test_a_resume_over_http_gives_a_paused_run_its_limits(
        worked: StoredAgents, store: Store) -> None:
    await _approved(worked, store, "http-turns-1")
    await _approved(worked, store, "http-budget-1", budget={"model_calls": 1})
    with LiveServer(worked.app("guarded")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            capped = await http.post(server.url("/runs/http-turns-1/resume"),
                                     json={"max_turns": 1})
            raised = await http.post(server.url("/runs/http-budget-1/resume"),
                                     json={"budget": {"model_calls": 2}})
    assert capped.status_code == 200, capped.text
    assert (capped.json()["status"], capped.json()["exit_reason"]) == ("failed", "max_turns")
    assert raised.status_code == 200, raised.text
    assert raised.json()["content"].startswith("answer: counted hello")


@pytest.mark.parametrize(("budget", "named"), [
    ({"time": 30}, "budget.time"), ({"thread": {"tokens": 800}}, "budget.thread"),
    ({"usd": 1}, f"budget.usd: {UNPRICED}")])
async def test_a_resume_over_http_refuses_limits_a_workflow_does_not_keep(
        worked: StoredAgents, store: Store, budget: dict[str, Any], named: str) -> None:
    run_id = f"http-refused-{next(iter(budget))}"  # workflow ids are the namespace's
    await _approved(worked, store, run_id)
    with LiveServer(worked.app("guarded")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            refused = await http.post(server.url(f"/runs/{run_id}/resume"),
                                      json={"budget": budget})
    assert refused.status_code == 400, refused.text
    assert named in refused.text
    assert (await store.get_run(run_id)).status is RunStatus.AWAITING_APPROVAL
