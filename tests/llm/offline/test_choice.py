from __future__ import annotations

import pytest

from bloge import ToolDefinition
from bloge.llm.offline.choice import choose_tool, score, takes_free_text


def free_text_tool(name: str, description: str = "") -> ToolDefinition:
    return ToolDefinition(name, description, {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})


@pytest.mark.parametrize(
    ("message", "expected"),
    [("How do I reset my password?", "searchKnowledgeBase"),
     ("I want a human agent right now.", "escalateToHuman"),
     ("I need a refund for order 1234, please open a ticket", "createTicket"),
     ("Can I speak to a real person?", "escalateToHuman"),
     ("My order arrived broken", "createTicket"),
     ("What is your shipping policy?", "searchKnowledgeBase"),
     ("How do I create an account?", "searchKnowledgeBase")],
)
def test_the_support_agent_picks_the_tool_the_customer_asks_for(
    support_tools: tuple[ToolDefinition, ...], message: str, expected: str,
) -> None:
    chosen = choose_tool(message, support_tools)
    assert chosen is not None
    assert chosen.name == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [("How is revenue trending this week?", "fetchMetrics"),
     ("How many signups did we get this month?", "fetchMetrics"),
     ("What was the average revenue over the last 30 days?", "runQuery"),
     ("run SELECT name FROM metrics LIMIT 3", "runQuery")],
)
def test_the_analyst_picks_metrics_or_sql(
    analyst_tools: tuple[ToolDefinition, ...], message: str, expected: str,
) -> None:
    chosen = choose_tool(message, analyst_tools)
    assert chosen is not None
    assert chosen.name == expected


def test_a_word_in_the_tool_name_outweighs_one_in_a_description() -> None:
    named = free_text_tool("lookupInvoice", "Find documents")
    described = free_text_tool("findDocument", "Look up an invoice by number")
    assert score("my invoice", named) > score("my invoice", described)


def test_ties_go_to_the_tool_listed_first() -> None:
    first, second = free_text_tool("invoiceA"), free_text_tool("invoiceB")
    assert choose_tool("my invoice", [first, second]) is first
    assert choose_tool("my invoice", [second, first]) is second


def test_without_a_match_the_first_free_text_tool_gets_the_message(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    chosen = choose_tool("zxqv blorp", support_tools)
    assert chosen is not None
    assert chosen.name == "searchKnowledgeBase"


def test_without_a_match_or_a_free_text_tool_none_is_chosen(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    assert choose_tool("zxqv blorp", analyst_tools) is None


def test_no_tools_means_no_choice() -> None:
    assert choose_tool("How do I reset my password?", []) is None


def test_only_tools_needing_nothing_but_free_text_take_free_text(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    assert [takes_free_text(t) for t in support_tools] == [True, False, False]
