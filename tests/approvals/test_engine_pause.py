"""The engine pauses a round whose calls wait, and resumes it call by call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
from bloge.agent import AgentInput, Decision, RunPaused
from bloge.agent.runtime import AgentEngine, RunStart, call_hash, posted_result
from bloge.core.errors import BlogeUsageError
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall, ToolDefinition
from tests.runtime.helpers import calls

ran: list[dict[str, Any]] = []
AMOUNT = {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}


def pay(input: dict[str, Any]) -> str:
    ran.append(dict(input))
    return f"paid {input['amount']}"


def look(input: dict[str, Any]) -> str:
    ran.append(dict(input))
    return "looked"


def engine_with(provider: ScriptedProvider) -> AgentEngine:
    registry = OperatorRegistry({"Pay": pay, "Look": look, "llmChat": LlmChatOperator(provider)})
    definition = (AgentBuilder.create("payer", registry=registry).model("m")
                  .tool("pay", "Pay", input={"amount": "tool_args.amount"}, parameters=AMOUNT,
                        requires_approval="tool_args.amount > 100")
                  .tool("look", "Look", input={"q": "tool_args.q"})
                  .tool("ask_user", external=True, parameters={"type": "object"})
                  .build())
    return AgentEngine("payer", definition, registry)


@pytest.fixture(autouse=True)
def _clean() -> None:
    ran.clear()


async def test_a_call_over_the_rule_waits_while_the_others_of_its_batch_run() -> None:
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a"), ("look", {"q": "x"}, "b"),
                                       ("pay", {"amount": 5}, "c")))
    with pytest.raises(RunPaused) as paused:
        await engine_with(provider).run(_start("pay"), None)
    assert paused.value.status == "awaiting_approval"
    assert [call.call_id for call in paused.value.pending] == ["a"]
    # The two run concurrently: in either order.
    assert sorted(ran, key=repr) == [{"amount": 5}, {"q": "x"}]
    assert set(paused.value.tool_round.results) == {"b", "c"}


async def test_each_call_of_a_parallel_batch_is_decided_on_its_own() -> None:
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a"), ("pay", {"amount": 900}, "b")),
                                 "done")
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as paused:
        await engine.run(_start("pay twice"), None)
    resumed = paused.value.resumed(
        decisions={"a": True, "b": Decision(approved=False, reason="too much")})
    output = await engine.run(RunStart(checkpoint=paused.value.checkpoint, pending=resumed), None)
    assert output.content == "done"
    assert ran == [{"amount": 500}]
    tool_messages = [m for m in output.messages if m.role == "tool"]
    assert tool_messages[0].content == "paid 500"
    assert "denied: too much" in tool_messages[1].content
    assert tool_messages[1].is_error


def broken(input: dict[str, Any]) -> str:
    raise RuntimeError("the ledger is down")


async def test_a_round_with_a_failed_call_goes_on_once_its_waiting_call_is_decided() -> None:
    # The failed call's result is its error's text: the round goes on with it as it is
    # (it was read as JSON, and the resumed round failed).
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a"), ("look", {"q": "x"}, "b")),
                                "done")
    registry = OperatorRegistry({"Pay": pay, "Look": broken, "llmChat": LlmChatOperator(provider)})
    definition = (AgentBuilder.create("payer", registry=registry).model("m")
                  .tool("pay", "Pay", input={"amount": "tool_args.amount"}, parameters=AMOUNT,
                        requires_approval=True)
                  .tool("look", "Look", input={"q": "tool_args.q"})
                  .build())
    engine = AgentEngine("payer", definition, registry)
    with pytest.raises(RunPaused) as paused:
        await engine.run(_start("pay"), None)
    assert not paused.value.tool_round.results["b"].success
    resumed = paused.value.resumed(decisions={"a": True})
    output = await engine.run(RunStart(checkpoint=paused.value.checkpoint, pending=resumed), None)
    assert output.content == "done"
    assert ran == [{"amount": 500}]
    failed = [m for m in output.messages if m.role == "tool" and m.tool_call_id == "b"]
    assert failed[0].is_error
    assert "the ledger is down" in failed[0].content


async def test_a_partial_decision_pauses_again_with_the_rest() -> None:
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a"), ("pay", {"amount": 900}, "b")),
                                 "done")
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as first:
        await engine.run(_start("pay twice"), None)
    with pytest.raises(RunPaused) as second:
        await engine.run(RunStart(checkpoint=first.value.checkpoint,
                                  pending=first.value.resumed(decisions={"a": True})), None)
    assert [call.call_id for call in second.value.pending] == ["b"]
    output = await engine.run(RunStart(checkpoint=second.value.checkpoint,
                                       pending=second.value.resumed(decisions={"b": True})), None)
    assert output.content == "done"
    assert ran == [{"amount": 500}, {"amount": 900}]


async def test_an_external_call_waits_for_its_posted_result() -> None:
    provider = ScriptedProvider(calls(("ask_user", {"question": "which?"}, "e")), "ok")
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as paused:
        await engine.run(_start("ask"), None)
    assert paused.value.status == "awaiting_tool_results"
    assert paused.value.pending[0].kind == "external"
    output = await engine.run(RunStart(checkpoint=paused.value.checkpoint,
                                       pending=paused.value.resumed(results={"e": {"pick": 2}})),
                              None)
    assert [m.content for m in output.messages if m.role == "tool"] == ['{"pick":2}']


async def test_a_run_s_own_tools_are_external_and_seen_by_the_model() -> None:
    provider = ScriptedProvider(calls(("client_fn", {}, "k")), "ok")
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as paused:
        await engine.run(RunStart(_input("go"), tools=[ToolDefinition("client_fn")]), None)
    assert paused.value.pending[0].tool == "client_fn"
    assert "client_fn" in [t.name for t in provider.requests[0].tools]


async def test_a_run_s_own_tool_named_like_an_external_tool_of_the_agent_s_is_that_tool(
        ) -> None:
    provider = ScriptedProvider(calls(("ask_user", {}, "k")), "ok")
    engine = engine_with(provider)
    with pytest.raises(RunPaused):
        await engine.run(RunStart(_input("go"), tools=[ToolDefinition("ask_user")]), None)
    assert [t.name for t in provider.requests[0].tools].count("ask_user") == 1


async def test_a_run_s_own_tool_may_not_take_the_name_of_an_agent_s_operator_tool() -> None:
    engine = engine_with(ScriptedProvider("ok"))
    with pytest.raises(BlogeUsageError, match="'look' has the name of another tool"):
        await engine.run(RunStart(_input("go"), tools=[ToolDefinition("look")]), None)


@pytest.mark.parametrize("amount", ["NaN", "Infinity", "-Infinity"])
async def test_arguments_holding_a_number_json_lacks_are_refused_without_waiting_or_running(
        amount: str) -> None:
    provider = ScriptedProvider(
        LlmResponse(finish_reason="tool_calls",
                    tool_calls=(ToolCall("a", "pay", f'{{"amount": {amount}}}'),)),
        "done")
    output = await engine_with(provider).run(_start("pay"), None)
    assert ran == []
    [result] = [m for m in output.messages if m.role == "tool"]
    assert result.is_error
    assert f"the arguments are not valid JSON ({amount} is not a JSON number)" in result.content


def test_a_posted_result_json_has_no_form_for_is_recorded_as_json_with_a_marker() -> None:
    content = posted_result({"rate": float("nan")}).content
    assert json.loads(content) == {"rate": {"$unserializable": "float", "str": "nan"}}


async def test_a_paused_run_resumed_from_its_checkpoint_alone_pauses_again() -> None:
    # Resumed without its round (agent.resume(paused.checkpoint)), the waiting call waits
    # again: the model is never sent a tool call that no tool message answers.
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a")), "done")
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as first:
        await engine.run(_start("pay"), None)
    with pytest.raises(RunPaused) as again:
        await engine.run(RunStart(checkpoint=first.value.checkpoint), None)
    assert again.value.pending[0].call_id == "a"
    assert again.value.pending[0].hash == first.value.pending[0].hash
    assert len(provider.requests) == 1
    assert ran == []


async def test_a_call_that_ran_before_the_pause_is_not_sent_again_from_the_checkpoint() -> None:
    provider = ScriptedProvider(calls(("pay", {"amount": 500}, "a"), ("look", {"q": "x"}, "b")))
    engine = engine_with(provider)
    with pytest.raises(RunPaused) as first:
        await engine.run(_start("pay"), None)
    with pytest.raises(RunPaused) as again:
        await engine.run(RunStart(checkpoint=first.value.checkpoint), None)
    assert ran == [{"q": "x"}]
    assert "outcome of tool 'look' is unknown" in again.value.tool_round.results["b"].content


async def test_a_checkpoint_that_stops_in_a_waiting_round_takes_no_new_input() -> None:
    engine = engine_with(ScriptedProvider(calls(("pay", {"amount": 500}, "a"))))
    with pytest.raises(RunPaused) as paused:
        await engine.run(_start("pay"), None)
    with pytest.raises(BlogeUsageError, match="stops in a tool round"):
        await engine.run(RunStart(_input("and?"), checkpoint=paused.value.checkpoint), None)


def test_the_hash_binds_tool_arguments_and_call() -> None:
    assert call_hash("pay", '{"b": 1, "a": 2}', "x") == call_hash("pay", '{"a":2,"b":1}', "x")
    assert call_hash("pay", '{"a": 2}', "x") != call_hash("pay", '{"a": 3}', "x")
    assert call_hash("pay", '{"a": 2}', "x") != call_hash("pay", '{"a": 2}', "y")


def _input(text: str) -> Any:
    return AgentInput.of(text)


def _start(text: str) -> RunStart:
    return RunStart(_input(text))
