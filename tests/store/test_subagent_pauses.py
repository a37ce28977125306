"""A sub-agent's run that pauses pauses its caller: the caller's record lists the child's
waiting calls, a decision given by the caller's run id decides them, and the caller resumed
takes the child up — its answer is the call's result, and the calls of the round that
finished do not run again. On every backend."""

from __future__ import annotations

from typing import Any

import pytest

from bloge import Agent, BudgetExceededError
from bloge.agent import RunPaused
from bloge.journal import render_timeline
from bloge.llm import FunctionProvider, LlmResponse, ScriptedProvider, ToolDefinition
from bloge.store import (
    ApprovalConflictError,
    RunStatus,
    Store,
    decide_call,
    pending_approvals,
    run_timeline,
    run_to_continue,
)
from tests.runtime.helpers import calls

ran: list[str] = []


def refund(amount: int) -> str:
    """Refund an amount."""
    ran.append(f"refund {amount}")
    return f"refunded {amount}"


refund.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


def lookup(q: str) -> str:
    """Look a word up."""
    ran.append(f"lookup {q}")
    return q.upper()


@pytest.fixture(autouse=True)
def _clean() -> None:
    ran.clear()


def billing(store: Store, *tools: Any) -> Agent:
    """Asks for a refund (which waits for approval), then answers."""
    return Agent(ScriptedProvider(calls(("refund", {"amount": 10}, "r1")), "Refunded 10."),
                 list(tools) or [refund], name="billing", store=store)


def triage(store: Store, child: Agent, *more: Agent) -> Agent:
    """Asks billing and looks a word up in one round, then answers with what came back."""
    def answer(request: Any) -> LlmResponse:
        results = [m.content for m in request.messages if m.role == "tool"]
        if results:
            return LlmResponse(" | ".join(results))
        asked = [(other.name, {"input": "refund 10"}, f"c{i}")
                 for i, other in enumerate((child, *more))]
        return calls(*asked, ("lookup", {"q": "kb"}, "look"))

    return Agent(FunctionProvider(answer), [child.as_tool(), *(m.as_tool() for m in more),
                                            lookup], name="triage", store=store)


async def paused_parent(agent: Agent) -> RunPaused:
    with pytest.raises(RunPaused) as caught:
        await agent.arun("help")
    return caught.value


async def test_a_child_waiting_for_approval_pauses_its_caller(store: Store) -> None:
    paused = await paused_parent(triage(store, billing(store)))
    assert paused.status == "awaiting_approval"
    (child,) = paused.children
    assert (child.call_id, child.tool, child.status) == ("c0", "billing", "awaiting_approval")
    (call,) = paused.pending
    assert (call.call_id, call.tool, call.run_id) == ("r1", "refund", child.run_id)
    parent = await store.get_run(paused.run_id or "")
    assert parent.status is RunStatus.AWAITING_APPROVAL
    assert [(p.run_id, p.call_id) for p in parent.pending_approvals] == [(child.run_id, "r1")]
    assert (await store.get_run(child.run_id)).parent_run_id == paused.run_id
    assert ran == ["lookup kb"]


async def test_the_callers_waiting_calls_include_its_sub_agents(store: Store) -> None:
    paused = await paused_parent(triage(store, billing(store)))
    listed = await pending_approvals(store, run_id=paused.run_id)
    assert [(p.run_id, p.call_id) for p in listed] == [(paused.children[0].run_id, "r1")]


async def test_the_callers_record_says_what_it_waits_on(store: Store) -> None:
    paused = await paused_parent(triage(store, billing(store)))
    events = await store.run_events(paused.run_id or "")
    child_run = paused.children[0].run_id
    (waiting,) = [e.body for e in events if e.type == "subagent_paused"]
    assert waiting == {"call_id": "c0", "tool": "billing", "run_id": child_run,
                       "status": "awaiting_approval", "turn": 1}
    (required,) = [e.body for e in events if e.type == "approval_required"]
    assert (required["call_id"], required["run_id"], required["subagent_run_id"]) == (
        "r1", paused.run_id, child_run)
    shown = "\n".join(render_timeline(run_timeline(paused.run_id or "", events)))
    assert f"billing c0 waits on sub-agent run {child_run}, awaiting approval" in shown
    assert f"refund r1 of sub-agent run {child_run} waits for a decision" in shown


async def test_deciding_by_the_callers_id_finishes_both_without_running_the_round_again(
        store: Store) -> None:
    agent = triage(store, billing(store))
    paused = await paused_parent(agent)
    output = await agent.aresume(paused.run_id or "", decisions={"r1": True})
    assert output.content == "Refunded 10. | KB"
    assert ran == ["lookup kb", "refund 10"]  # the lookup of the round ran once
    child = await store.get_run(paused.children[0].run_id)
    assert child.status is RunStatus.SUCCEEDED
    assert (await store.get_run(output.run_id or "")).status is RunStatus.SUCCEEDED


async def test_a_denied_child_call_is_the_childs_models_to_answer(store: Store) -> None:
    agent = triage(store, billing(store))
    paused = await paused_parent(agent)
    output = await agent.aresume(paused.run_id or "", decisions={"r1": False})
    assert output.content == "Refunded 10. | KB"  # the scripted child answers anyway
    assert ran == ["lookup kb"]  # the refund never ran


async def test_a_child_waiting_for_a_result_pauses_its_caller_for_results(store: Store) -> None:
    child = Agent(ScriptedProvider(calls(("ask_user", {"q": "which order?"}, "u1")), "Done."),
                  [ToolDefinition("ask_user")], name="billing", store=store)
    agent = triage(store, child)
    paused = await paused_parent(agent)
    assert paused.status == "awaiting_tool_results"
    assert (await store.get_run(paused.run_id or "")).status is RunStatus.AWAITING_TOOL_RESULTS
    output = await agent.aresume(paused.run_id or "", tool_results={"u1": "order 7"})
    assert output.content == "Done. | KB"


async def test_a_finished_sibling_sub_agent_is_not_asked_again(store: Store) -> None:
    asked: list[str] = []

    def research(request: Any) -> LlmResponse:
        asked.append(request.messages[-1].content)
        return LlmResponse("Found.")

    researcher = Agent(FunctionProvider(research), name="researcher", store=store)
    agent = triage(store, billing(store), researcher)
    paused = await paused_parent(agent)
    output = await agent.aresume(paused.run_id or "", decisions={"r1": True})
    assert output.content == "Refunded 10. | Found. | KB"
    assert asked == ["refund 10"]


async def test_a_grandchilds_call_pauses_every_run_above_it(store: Store) -> None:
    inner = billing(store)
    middle = Agent(ScriptedProvider(calls(("billing", {"input": "refund"}, "m1")), "Middle."),
                   [inner.as_tool()], name="middle", store=store)
    top = Agent(ScriptedProvider(calls(("middle", {"input": "go"}, "t1")), "Top."),
                [middle.as_tool()], name="top", store=store)
    with pytest.raises(RunPaused) as caught:
        await top.arun("go")
    top_id = caught.value.run_id or ""
    (call,) = (await store.get_run(top_id)).pending_approvals
    middle_id = caught.value.children[0].run_id
    assert call.run_id != middle_id  # the grandchild's run holds it
    assert (await store.get_run(call.run_id)).parent_run_id == middle_id
    assert await run_to_continue(store, call.run_id) == top_id
    output = await top.aresume(top_id, decisions={"r1": True})
    assert output.content == "Top."
    assert ran == ["refund 10"]


async def test_a_call_id_two_sub_agents_wait_on_is_decided_by_its_own_run(store: Store) -> None:
    agent = triage(store, billing(store), Agent(
        ScriptedProvider(calls(("refund", {"amount": 10}, "r1")), "Refunded too."),
        [refund], name="billing2", store=store))
    paused = await paused_parent(agent)
    with pytest.raises(ApprovalConflictError, match="several runs"):
        await agent.aresume(paused.run_id or "", decisions={"r1": True})
    for child in paused.children:
        await decide_call(store, child.run_id, "r1", approve=True)
    output = await agent.aresume(paused.run_id or "")
    assert output.content == "Refunded 10. | Refunded too. | KB"


async def test_a_child_that_spends_its_callers_budget_stops_the_caller(store: Store) -> None:
    def spending(request: Any) -> LlmResponse:
        return LlmResponse("long answer", prompt_tokens=500, completion_tokens=100)

    researcher = Agent(FunctionProvider(spending), name="researcher", store=store,
                       max_tokens=50)
    answers = iter([calls(("researcher", {"input": "q"}, "c0")), LlmResponse("done")])
    agent = Agent(FunctionProvider(lambda request: next(answers)), [researcher.as_tool()],
                  name="triage", store=store, budget={"tokens": 400}, max_tokens=50)
    with pytest.raises(BudgetExceededError) as stopped:
        await agent.arun_output("go")
    (child,) = await store.child_runs(stopped.value.run_id or "")
    assert stopped.value.sub_agents == {f"researcher (run {child.id})": 600}
    run = await store.get_run(stopped.value.run_id or "")
    assert (run.status, run.exit_reason) == (RunStatus.FAILED, "budget")
    assert run.error is not None
    assert f"its sub-agents spent 600 in researcher (run {child.id})" in run.error.message


async def test_an_unrecorded_callers_sub_agent_that_pauses_fails_the_call() -> None:
    child = Agent(ScriptedProvider(calls(("refund", {"amount": 10}, "r1")), "never"), [refund],
                  name="billing")
    caller = Agent(ScriptedProvider(calls(("billing", {"input": "refund"}, "c0")), "Sorry."),
                   [child.as_tool()], name="triage")
    output = await caller.arun_output("help")
    (message,) = [m for m in output.messages if m.role == "tool"]
    assert message.is_error
    assert "sub-agent 'billing' did not answer" in message.content
    assert "give both agents a store" in message.content
    assert output.content == "Sorry."


async def test_a_caller_with_calls_of_its_own_waiting_pauses_until_both_are_decided(
        store: Store) -> None:
    child = billing(store)
    answers = iter([calls(("billing", {"input": "refund 10"}, "c0"),
                          ("refund", {"amount": 99}, "own")), LlmResponse("Both done.")])
    caller = Agent(FunctionProvider(lambda request: next(answers)), [child.as_tool(), refund],
                   name="triage", store=store)
    paused = await paused_parent(caller)
    assert [(c.call_id, c.run_id) for c in paused.pending] == [
        ("own", None), ("r1", paused.children[0].run_id)]
    with pytest.raises(RunPaused) as again:
        await caller.aresume(paused.run_id or "", decisions={"own": True})
    assert [c.call_id for c in again.value.pending] == ["r1"]
    assert ran == ["refund 99"]
    output = await caller.aresume(paused.run_id or "", decisions={"r1": True})
    assert output.content == "Both done."
    assert ran == ["refund 99", "refund 10"]


async def test_cancelling_a_waiting_caller_cancels_the_child_it_waits_on(store: Store) -> None:
    paused = await paused_parent(triage(store, billing(store)))
    (child,) = paused.children
    cancelled = await store.cancel_run(paused.run_id or "")
    assert cancelled.status is RunStatus.CANCELLED
    assert (await store.get_run(child.run_id)).status is RunStatus.CANCELLED
    assert await pending_approvals(store) == []
    with pytest.raises(ApprovalConflictError, match="is cancelled, not waiting"):
        await decide_call(store, paused.run_id or "", "r1", approve=True)
    assert ran == ["lookup kb"]  # the caller's own call of the round; no refund
