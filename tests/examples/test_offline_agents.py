"""End to end: the example agents, compiled from their DSL over their real operators, answer
their example questions with the offline model and the examples' hooks — the first commands a
newcomer runs."""

from __future__ import annotations

import json
import re

from bloge import (
    AgentDef,
    AgentLoopOperator,
    AgentOutput,
    Done,
    OperatorRegistry,
    StreamingAgentLoopOperator,
    Token,
    ToolEnd,
    ToolStart,
)


async def ask_support(registry: OperatorRegistry, agent: AgentDef, question: str) -> AgentOutput:
    return await AgentLoopOperator("customerSupport", agent, registry).aexecute(question)


def called(output: AgentOutput) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, json.loads(c.arguments)) for m in output.messages for c in m.tool_calls]


async def test_the_password_question_is_answered_from_the_knowledge_base(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    output = await ask_support(offline_registry, support_agent, "How do I reset my password?")
    assert called(output) == [("searchKnowledgeBase", {"query": "How do I reset my password?"})]
    assert output.content.startswith(
        "KB-RESET-001 — Reset the password from Settings > Security and confirm the email link.")
    assert output.exit_reason == "stop"
    assert output.usage.llm_calls == 2


async def test_asking_for_a_human_escalates_and_the_exit_condition_ends_the_run(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    output = await ask_support(offline_registry, support_agent, "I want a human agent right now.")
    assert [name for name, _ in called(output)] == ["escalateToHuman"]
    assert output.exit_reason == "exit_condition"
    assert output.content == "Let me escalate the conversation to a human support agent."
    (result,) = output.tool_results.values()
    assert result["queue"] == "human-support"


async def test_a_refund_with_a_ticket_request_creates_a_ticket(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    output = await ask_support(offline_registry, support_agent,
                               "I need a refund for order 1234, please open a ticket")
    assert [name for name, _ in called(output)] == ["createTicket"]
    match = re.search(r"I created ticket (TCK-\d+) \(priority (\w+)\)", output.content)
    assert match is not None
    assert match[2] in ("low", "normal", "high", "urgent")
    (result,) = output.tool_results.values()
    assert (result["ticketId"], result["priority"]) == (match[1], match[2])
    assert output.usage.llm_calls == 2


async def test_an_urgent_ticket_is_stored_with_the_urgent_priority(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    output = await ask_support(offline_registry, support_agent,
                               "My order arrived broken, open a ticket, this is urgent")
    assert "I created ticket TCK-1001 (priority urgent)" in output.content


async def test_a_question_without_an_article_offers_a_ticket_or_a_human(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    output = await ask_support(offline_registry, support_agent, "zxqv blorp")
    assert output.content.startswith("I couldn't find a knowledge-base article")
    assert "create a support ticket" in output.content


async def test_the_revenue_question_streams_tools_tokens_and_a_done_chunk(
    offline_registry: OperatorRegistry, analyst_agent: AgentDef,
) -> None:
    agent = StreamingAgentLoopOperator("dataAnalyst", analyst_agent, offline_registry)
    chunks = [chunk async for chunk in agent.stream("How is revenue trending this week?")]
    kinds = [type(chunk) for chunk in chunks]
    assert {ToolStart, ToolEnd, Token} <= set(kinds)
    assert kinds[-1] is Done
    ends = [chunk for chunk in chunks if isinstance(chunk, ToolEnd)]
    assert [(e.tool_name, e.success) for e in ends] == [("fetchMetrics", True)]
    done = chunks[-1]
    assert isinstance(done, Done)
    content = done.final_output.content
    assert content.startswith("Revenue is up ")
    assert "over this week compared with the week before" in content
    answer_tokens = "".join(c.text for c in chunks if isinstance(c, Token) and c.turn_number == 2)
    assert answer_tokens == content


async def test_the_analyst_answers_an_aggregate_question_with_sql(
    offline_registry: OperatorRegistry, analyst_agent: AgentDef,
) -> None:
    output = await AgentLoopOperator("dataAnalyst", analyst_agent, offline_registry).aexecute(
        "What was the average revenue over the last 30 days?")
    assert [name for name, _ in called(output)] == ["runQuery"]
    assert output.content.startswith("The query returned average = ")


async def test_an_unknown_metric_ends_with_the_tools_own_words_not_a_loop(
    offline_registry: OperatorRegistry, analyst_agent: AgentDef,
) -> None:
    output = await AgentLoopOperator("dataAnalyst", analyst_agent, offline_registry).aexecute(
        "How did signup do this week?")
    assert output.usage.llm_calls == 2
    assert output.content.startswith("The fetchMetrics tool could not do it:\n")
    assert "unknown metric 'signup'; did you mean 'signups'?" in output.content
