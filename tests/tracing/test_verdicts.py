"""bloge's own span attributes, as an OTLP receiver gets them: a run that pauses for approval
ends its span as paused and, resumed after the decisions, goes on in a segment span of the
same trace (nothing sent twice); each decided call's span says how it was decided and by
whom; guard verdicts are span events; a budget stop names the budget."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bloge import Agent, BudgetExceededError
from bloge.agent import tool_call_guard
from bloge.agent.runtime import Decision
from bloge.llm import ScriptedProvider, tool_call_response
from bloge.store import RunEvent, open_store
from bloge.tracing import RunTracing
from bloge.tracing.verdicts import continued, segment_span_id
from tests.runtime.helpers import calls
from tests.server.live_server import LiveServer
from tests.tracing.receiver import Receiver

sent: list[int] = []


def transfer(amount: int) -> str:
    """Send money."""
    sent.append(amount)
    return f"sent {amount}"


transfer.requires_approval = "tool_args.amount > 100"  # type: ignore[attr-defined]  # the facade reads it


def payer(tmp_path: Path, tracing: RunTracing, *answers: object, **options: object) -> Agent:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    return Agent(ScriptedProvider(*answers), [transfer], name="payer", model="gpt-4o",
                 store=store, **options)  # type: ignore[arg-type]  # the options are Agent's


async def test_a_paused_run_ends_its_span_and_its_resume_is_a_segment_of_the_same_trace(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    sent.clear()
    agent = payer(tmp_path, tracing,
                  calls(("transfer", {"amount": 500}, "a"), ("transfer", {"amount": 900}, "b"),
                        ("transfer", {"amount": 5}, "c")), "done")
    with pytest.raises(Exception, match="awaiting approval") as raised:
        await agent.arun_output("pay")
    run_id = raised.value.run_id  # type: ignore[attr-defined]  # RunPaused
    assert tracing.flush()
    before = received.wait_for(lambda spans: len(spans) == 3)  # run, chat, the call that ran
    (paused,) = received.named("invoke_agent payer")
    assert paused.status == 0  # unset: a pause is no failure
    assert paused.attributes["bloge.exit_reason"] == "paused"
    assert paused.attributes["bloge.pause.status"] == "awaiting_approval"
    assert paused.attributes["bloge.pause.waiting_calls"] == 2
    assert paused.attributes["bloge.pause.call_ids"] == ("a", "b")
    assert paused.attributes["bloge.usage.tool_calls"] == 1
    assert "error.type" not in paused.attributes
    assert [s.name for s in before if s.name.startswith("execute_tool")] == [
        "execute_tool transfer"]

    output = await agent.aresume(run_id, decisions={
        "a": Decision(approved=True, principal="ann"),
        "b": Decision(approved=False, reason="too much", principal="bob")})
    assert output.content == "done"
    assert sent == [5, 500]
    assert tracing.flush()
    spans = received.wait_for(lambda spans: len(spans) == 7)
    assert not [span_id for span_id, seen in Counter(s.span_id for s in spans).items()
                if seen > 1]
    assert {span.trace_id for span in spans} == {paused.trace_id}
    first, resumed = sorted(received.named("invoke_agent payer"), key=lambda s: s.start)
    assert first == paused
    assert resumed.parent == paused.span_id
    assert resumed.attributes["bloge.exit_reason"] == "stop"
    assert resumed.attributes["bloge.segment"] == 1
    assert resumed.attributes["bloge.run.id"] == run_id
    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in received.named(
        "execute_tool transfer")}
    assert tools["c"].parent == paused.span_id
    assert "bloge.approval.decision" not in tools["c"].attributes  # it never waited
    assert tools["a"].parent == tools["b"].parent == resumed.span_id
    assert (tools["a"].attributes["bloge.approval.decision"],
            tools["a"].attributes["bloge.approval.decided_by"]) == ("approved", "ann")
    assert (tools["b"].attributes["bloge.approval.decision"],
            tools["b"].attributes["bloge.approval.decided_by"]) == ("denied", "bob")
    assert tools["b"].status == 0  # refused, not failed
    assert not any("gen_ai.tool.call.arguments" in s.attributes for s in tools.values())
    (last_chat,) = [s for s in received.named("chat gpt-4o") if s.attributes["bloge.turn"] == 2]
    assert last_chat.parent == resumed.span_id


async def test_guard_verdicts_are_span_events_of_the_call_or_the_run(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    agent = payer(tmp_path, tracing, tool_call_response("transfer", '{"amount": 20}',
                                                        call_id="t1"), "ok",
                  guards=[tool_call_guard(name="big", when="tool_args.amount > 50")])
    assert await agent.arun("pay 20") == "ok"
    assert tracing.flush()
    received.wait_for(lambda spans: len(spans) == 4)
    (tool,) = received.named("execute_tool transfer")
    assert tool.events == (("bloge.guard", {
        "bloge.guard.name": "big", "bloge.guard.kind": "tool_call",
        "bloge.guard.verdict": "pass", "bloge.turn": 1, "gen_ai.tool.call.id": "t1"}),)
    (run,) = received.named("invoke_agent payer")
    assert run.events == ()


async def test_a_tripped_guard_of_a_call_that_never_ran_is_an_event_of_the_run_span(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    agent = payer(tmp_path, tracing, tool_call_response("transfer", '{"amount": 90}',
                                                        call_id="t1"), "ok",
                  guards=[tool_call_guard(name="big", when="tool_args.amount > 50")])
    with pytest.raises(Exception, match="big"):
        await agent.arun("pay 90")
    assert tracing.flush()
    received.wait_for(lambda spans: any(s.name.startswith("invoke_agent") for s in spans))
    (run,) = received.named("invoke_agent payer")
    assert run.attributes["error.type"] == "GuardrailTrippedError"
    [(name, attributes)] = run.events
    assert name == "bloge.guard"
    assert (attributes["bloge.guard.name"], attributes["bloge.guard.verdict"]) == ("big", "trip")
    assert received.named("execute_tool transfer") == []


async def test_a_budget_stop_names_the_budget_on_the_run_span(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    agent = payer(tmp_path, tracing, tool_call_response("transfer", '{"amount": 20}'), "ok",
                  budget={"model_calls": 1})
    with pytest.raises(BudgetExceededError):
        await agent.arun("pay 20")
    assert tracing.flush()
    received.wait_for(lambda spans: any(s.name.startswith("invoke_agent") for s in spans))
    (run,) = received.named("invoke_agent payer")
    assert run.status == 2  # error
    assert run.attributes["bloge.exit_reason"] == "budget"
    assert run.attributes["error.type"] == "BudgetExceededError"
    assert (run.attributes["bloge.budget.scope"], run.attributes["bloge.budget.limit_name"],
            run.attributes["bloge.budget.limit"], run.attributes["bloge.budget.used"]) == (
        "run", "model_calls", 1, 1)
    assert run.attributes["bloge.usage.tool_calls"] == 1


def test_a_segment_resumed_again_after_a_crash_is_the_same_segment() -> None:
    def event(seq: int, kind: str, **body: object) -> RunEvent:
        return RunEvent("r1", seq, kind, float(seq), body)

    history = [event(1, "approval_required", call_id="a"),
               event(2, "approval_required", call_id="b"),
               event(3, "approval_decided", call_id="a", approved=True, principal="ann"),
               event(4, "approval_decided", call_id="b", approved=False, principal="bob"),
               event(5, "on_agent_tool_completed", tool_call_id="a"),
               event(6, "tool_results_required", call_id="x"),
               event(7, "tool_results_posted", call_ids=["x"]),
               event(8, "approval_expired", call_id="c")]
    again = continued("r1", history)
    assert (again.segment, again.parent_id, again.started_at) == (
        2, segment_span_id("r1", 1), 7.0)
    assert again.decisions == {"c": ("expired", None)}  # a, b: before the last pause
    crashed = continued("r1", [*history[:5]])
    assert (crashed.segment, crashed.parent_id) == (1, segment_span_id("r1", 0))
    assert crashed.decisions == {"b": ("denied", "bob")}  # a's span was sent before the crash
    assert continued("r1", history[2:5]).segment == 0  # never paused: the run span itself
