"""CONFORMANCE.md's running and streaming scenarios, through the DSL and the builder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bloge import (
    AgentBuilder,
    AgentDslCompiler,
    AgentLoopOperator,
    Done,
    StreamingAgentLoopOperator,
    Token,
    ToolEnd,
    ToolStart,
)
from bloge.llm import FunctionProvider

from .scenarios import analyst_registry, support_builder, support_registry


def dsl_support_agent(fixtures: Path) -> tuple[AgentLoopOperator, FunctionProvider]:
    registry, provider = support_registry()
    definition = AgentDslCompiler(registry).compile_file(fixtures / "agent-customer-support.bloge")
    return AgentLoopOperator("supportAgent", definition, registry), provider


def built_support_agent(fixtures: Path) -> tuple[AgentLoopOperator, FunctionProvider]:
    registry, provider = support_registry()
    agent = support_builder(registry).to_operator("supportAgent")
    return agent, provider


MakeAgent = Callable[[Path], tuple[AgentLoopOperator, FunctionProvider]]
AGENTS: dict[str, MakeAgent] = {"dsl": dsl_support_agent, "builder": built_support_agent}


@pytest.mark.parametrize("make", AGENTS.values(), ids=AGENTS.keys())
def test_password_question_takes_two_model_calls_and_answers_from_the_kb(make: MakeAgent, fixtures: Path) -> None:
    agent, provider = make(fixtures)
    output = agent.execute("How do I reset my password?")
    assert len(provider.requests) == 2
    assert output.finish_reason == "stop"
    assert "KB-RESET-001" in output.content
    assert "Reset the password" in output.content


@pytest.mark.parametrize("make", AGENTS.values(), ids=AGENTS.keys())
def test_asking_for_a_human_escalates_and_the_exit_condition_ends_the_run(make: MakeAgent, fixtures: Path) -> None:
    agent, provider = make(fixtures)
    output = agent.execute("I want a human agent right now.")
    assert len(provider.requests) == 1
    assert output.finish_reason == "tool_calls"
    assert output.exit_reason == "exit_condition"
    (result,) = output.tool_results.values()
    assert result["queue"] == "human-support"


def test_the_tool_result_goes_back_as_a_tool_message_holding_the_operator_json(fixtures: Path) -> None:
    agent, provider = dsl_support_agent(fixtures)
    agent.execute("I need a refund for order 42")
    second = provider.requests[1].messages
    assistant, tool = second[-2], second[-1]
    assert assistant.role == "assistant"
    assert tool.role == "tool"
    assert tool.tool_call_id == assistant.tool_calls[0].id
    assert tool.content == ('{"ticketId":"TCK-1007","status":"open","priority":"high",'
                            '"title":"Support follow-up"}')


def test_the_refund_path_creates_a_ticket(fixtures: Path) -> None:
    agent, _ = dsl_support_agent(fixtures)
    output = agent.execute("Please open a ticket about my refund")
    assert output.content == "I created ticket TCK-1007 with priority high."


async def test_the_streaming_analyst_streams_tools_tokens_and_done_last(fixtures: Path) -> None:
    registry, _ = analyst_registry()
    definition = AgentDslCompiler(registry).compile_file(fixtures / "streaming-analysis-agent.bloge")
    agent = StreamingAgentLoopOperator("analyst", definition, registry)
    chunks = [chunk async for chunk in agent.stream("How is revenue trending this week?")]
    kinds = [type(chunk) for chunk in chunks]
    assert ToolStart in kinds
    assert ToolEnd in kinds
    assert Token in kinds
    assert kinds.count(Done) == 1
    final = chunks[-1]
    assert isinstance(final, Done)
    assert final.final_output.finish_reason == "stop"
    assert "Revenue" in final.final_output.content
    assert "".join(c.text for c in chunks if isinstance(c, Token)) == final.final_output.content


def test_the_streaming_analyst_built_with_the_builder(fixtures: Path) -> None:
    registry, _ = analyst_registry()
    compiled = AgentDslCompiler(registry).compile_file(fixtures / "streaming-analysis-agent.bloge")
    agent = AgentBuilder.from_def(compiled, registry=registry).to_streaming_operator("analyst")
    chunks = agent.execute("How is revenue trending this week?")
    assert isinstance(chunks[-1], Done)
    assert chunks[-1].final_output.content.startswith("Revenue is up by 12.0%")
