"""Handoffs in the loop: the model sees transfer_to_<name>; calling it continues the run with
the other agent's prompt, tools and model; listeners and the stream are told."""

from __future__ import annotations

import pytest

from bloge import (
    Agent,
    AgentBuilder,
    AgentDef,
    AgentExecutionListener,
    AgentLoopOperator,
    BlogeUsageError,
    Done,
    Handoff,
    LlmChatOperator,
    MaxTurnsExceededError,
    OperatorRegistry,
    Token,
    ToolStart,
)
from bloge.agent import AgentCallbackContext, AgentCheckpoint, HandoffPayload
from bloge.agent.runtime import PendingRound, RecordedResult, RunStart
from bloge.llm import (
    FunctionProvider,
    LlmMessage,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
    tool_call_response,
)
from tests.handoffs.agents import billing, transfer, triage


def test_the_model_is_offered_each_handoff_as_a_transfer_tool() -> None:
    billing_agent, _ = billing()
    agent, model = triage(handoffs=[billing_agent])
    agent.run("I want a refund for A1")
    (offered,) = model.requests[0].tools
    assert offered.name == "transfer_to_billing"
    assert "billing agent" in offered.description
    assert "Refunds and invoices." in offered.description
    assert offered.parameters["required"] == []


def test_a_handoff_continues_the_run_with_the_other_agent() -> None:
    billing_agent, billing_model = billing()
    agent, triage_model = triage(handoffs=[billing_agent])
    output = agent.run_output("I want a refund for A1")
    assert output.content == "Refunded A1."
    assert output.turns_used == 3
    assert len(triage_model.requests) == 1
    first = billing_model.requests[0]
    assert first.messages[0].content == "You are billing."
    assert [t.name for t in first.tools] == ["refund"]
    assert first.messages[-1].content == '{"assistant": "billing"}'


def test_the_transcript_keeps_the_handoff_call_and_its_answer() -> None:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent])
    output = agent.run_output("I want a refund for A1")
    roles = [(m.role, m.content) for m in output.messages]
    assert roles[:4] == [("system", "You triage."), ("user", "I want a refund for A1"),
                         ("assistant", ""), ("tool", '{"assistant": "billing"}')]


def test_a_second_handoff_in_one_round_is_refused() -> None:
    billing_agent, billing_model = billing()
    twice = LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("h1", "transfer_to_billing", "{}"), ToolCall("h2", "transfer_to_billing", "{}")))
    agent, _ = triage(twice, handoffs=[billing_agent])
    output = agent.run_output("refund")
    tool_messages = {m.tool_call_id: m for m in output.messages if m.role == "tool"}
    assert tool_messages["h1"].content == '{"assistant": "billing"}'
    assert tool_messages["h2"].is_error
    assert "already hands the conversation over" in tool_messages["h2"].content
    assert len(billing_model.requests) == 2


class Handoffs(AgentExecutionListener):
    def __init__(self) -> None:
        self.seen: list[tuple[str, HandoffPayload]] = []

    def on_agent_handoff(self, context: AgentCallbackContext, payload: HandoffPayload) -> None:
        self.seen.append((context.operator_ref, payload))


def test_listeners_hear_the_handoff_with_its_reason() -> None:
    billing_agent, _ = billing()
    heard = Handoffs()
    model = ScriptedProvider(transfer("the customer wants a refund"))
    agent = Agent(model, name="triage", handoffs=[billing_agent], listeners=[heard])
    agent.run("refund")
    ((ref, payload),) = heard.seen
    assert ref == "triage"
    assert (payload.turn_number, payload.handoff, payload.from_agent, payload.to_agent,
            payload.tool_call_id, payload.reason) == (
        1, "billing", "triage", "billing", "h1", "the customer wants a refund")


def test_a_stream_shows_the_handoff_before_the_other_agents_chunks() -> None:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent])
    chunks = list(agent.stream("I want a refund for A1"))
    assert chunks[0] == Handoff("triage", "billing", "a refund", 1)
    assert isinstance(chunks[1], ToolStart)
    assert chunks[1].tool_name == "refund"
    assert "".join(c.text for c in chunks if isinstance(c, Token)) == "Refunded A1."
    assert isinstance(chunks[-1], Done)


async def test_handoffs_work_awaited_too() -> None:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent])
    assert await agent.arun("I want a refund for A1") == "Refunded A1."
    billing_agent2, _ = billing()
    agent2, _ = triage(handoffs=[billing_agent2])
    chunks = [chunk async for chunk in agent2.astream("refund")]
    assert any(isinstance(chunk, Handoff) for chunk in chunks)


def test_turns_count_across_handoffs_so_ping_pong_stops_at_max_turns() -> None:
    def bouncing(to: str) -> FunctionProvider:
        return FunctionProvider(lambda request: tool_call_response(
            f"transfer_to_{to}", "{}", call_id=f"c{len(request.messages)}"))

    def operator(name: str, other: str, model: FunctionProvider) -> AgentLoopOperator:
        registry = OperatorRegistry().register("llmChat", LlmChatOperator(model))
        definition = (AgentBuilder.create(name).model("m").max_turns(5)
                      .handoff(other, other).build())
        return AgentLoopOperator(name, definition, registry)

    to_billing, to_triage = bouncing("billing"), bouncing("triage")
    triage_op = operator("triage", "billing", to_billing)
    billing_op = operator("billing", "triage", to_triage)
    engines = {"triage": triage_op.engine, "billing": billing_op.engine}
    triage_op.engine.link(engines)
    billing_op.engine.link(engines)
    with pytest.raises(MaxTurnsExceededError) as raised:
        triage_op.execute("ping")
    assert raised.value.checkpoint.turn_count == 5
    assert (len(to_billing.requests), len(to_triage.requests)) == (3, 2)


def test_a_turn_cap_given_when_linking_holds_for_every_agent_the_run_goes_on_with() -> None:
    def bouncing(to: str) -> FunctionProvider:
        return FunctionProvider(lambda request: tool_call_response(
            f"transfer_to_{to}", "{}", call_id=f"c{len(request.messages)}"))

    models = {"triage": bouncing("billing"), "billing": bouncing("triage")}
    definitions = {name: AgentBuilder.create(name).model("m").max_turns(2)
                   .handoff(other, other).build()
                   for name, other in (("triage", "billing"), ("billing", "triage"))}

    def operator(definition: AgentDef) -> AgentLoopOperator:
        model = models[definition.id]
        registry = OperatorRegistry().register("llmChat", LlmChatOperator(model))
        return AgentLoopOperator(definition.id, definition, registry)

    def given(definition: AgentDef) -> AgentDef:
        return AgentBuilder.from_def(definition).max_turns(7).build()

    triage_op = operator(given(definitions["triage"]))
    triage_op.engine.link_all(definitions, lambda definition: operator(definition).engine,
                              given=given)
    with pytest.raises(MaxTurnsExceededError) as raised:
        triage_op.execute("ping")
    assert (raised.value.checkpoint.turn_count, raised.value.max_turns) == (7, 7)


def test_an_agent_cannot_hand_over_to_itself_or_to_two_agents_of_one_name() -> None:
    one, _ = billing()
    two, _ = billing()
    with pytest.raises(BlogeUsageError, match="'billing' is taken"):
        Agent(ScriptedProvider(), name="triage", handoffs=[one, two])
    with pytest.raises(BlogeUsageError, match="'billing' is taken"):
        Agent(ScriptedProvider(), name="billing", handoffs=[one])
    with pytest.raises(BlogeUsageError, match="handoffs are a list"):
        Agent(ScriptedProvider(), name="triage", handoffs=one)  # type: ignore[arg-type]  # the mistake under test


async def test_a_run_resumed_inside_its_handing_over_round_hands_over_again() -> None:
    billing_agent, billing_model = billing()
    agent, triage_model = triage(handoffs=[billing_agent])
    asked = LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("h1", "transfer_to_billing", '{"reason": "a refund"}'),))
    conversation = (LlmMessage.system("You triage."), LlmMessage.user("Refund A1"))
    checkpoint = AgentCheckpoint(conversation, 0, {}, "triage")
    recorded = {"h1": RecordedResult(success=True, content='{"assistant": "billing"}',
                                     text_result=True)}
    for results in ({}, recorded):  # the handoff's answer lost with the crash, or kept
        pending = PendingRound(1, asked, results)
        output = await agent.operator.engine.run(
            RunStart(checkpoint=checkpoint, pending=pending), None)
        assert output.content == "Refunded A1."
        billing_model.add(tool_call_response("refund", '{"order_id": "A1"}', call_id="r1"),
                          "Refunded A1.")
    assert not triage_model.requests


def test_an_engine_reaches_the_agents_its_handoffs_lead_to_at_any_distance_once_each() -> None:
    model = ScriptedProvider("unused")
    refunds = Agent(model, name="refunds")
    billing_agent = Agent(model, name="billing", handoffs=[refunds])
    sales = Agent(model, name="sales", handoffs=[billing_agent])
    agent = Agent(model, name="triage", handoffs=[billing_agent, sales])
    engine = agent.operator.engine
    reached = engine.reached()
    assert sorted(other.definition.id for other in reached) == [
        "billing", "refunds", "sales", "triage"]
    assert reached[0] is engine
    assert engine.find("refunds") is refunds.operator.engine
    assert engine.find("nobody") is None
    assert [other.definition.id for other in refunds.operator.engine.reached()] == ["refunds"]
