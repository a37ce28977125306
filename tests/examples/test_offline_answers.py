"""The examples' answer formatters: how their tool results read from the offline model."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given

from bloge import AgentDef, ToolDefinition
from bloge.llm.offline import ToolResult
from examples.analyst.answers import format_answer as analyst_answer
from examples.support.answers import format_answer as support_answer
from tests.llm.offline.test_robustness import JSON


def support(tool_name: str, value: Any, *, tools: tuple[ToolDefinition, ...] = ()) -> str | None:
    return support_answer(ToolResult.of(tool_name, json.dumps(value)), tools)


def analyst(tool_name: str, value: Any, *, arguments: dict[str, Any] | None = None) -> str | None:
    return analyst_answer(ToolResult.of(tool_name, json.dumps(value), arguments=arguments), ())


def test_an_article_leads_with_its_id_and_summary() -> None:
    text = support("searchKnowledgeBase", {
        "articleId": "KB-RESET-001",
        "summary": "Reset the password from Settings > Security and confirm the email link.",
        "related": ["KB-LOGIN-002"]})
    assert text == ("KB-RESET-001 — Reset the password from Settings > Security and confirm the "
                    "email link.")


def test_no_article_suggests_the_other_tools_instead_of_guessing(support_agent: AgentDef) -> None:
    tools = tuple(tool.tool_definition for tool in support_agent.tools)
    text = support("searchKnowledgeBase", {"articleId": None, "summary": "No article matched."},
                   tools=tools)
    assert text == ("I couldn't find a knowledge-base article that answers this. I can also "
                    "create a support ticket for follow-up or escalate the conversation to a "
                    "human support agent: just ask.")


def test_a_ticket_is_quoted_with_its_priority() -> None:
    text = support("createTicket", {"ticketId": "TCK-1001", "status": "open",
                                    "priority": "normal", "title": "Refund for order 1234"})
    assert text is not None
    assert text.startswith("I created ticket TCK-1001 (priority normal): Refund for order 1234.")


def test_an_escalation_names_the_queue_and_the_wait() -> None:
    text = support("escalateToHuman", {"queue": "human-support", "etaMinutes": 5, "reason": "r"})
    assert text == ("I've handed this conversation to a human agent in the human-support queue; "
                    "the expected wait is about 5 minutes.")


def test_a_metric_reads_as_a_trend_over_its_period() -> None:
    text = analyst("fetchMetrics", {"metricName": "revenue", "timeRange": "this_week",
                                    "trend": "up", "changePct": 11.7})
    assert text == "Revenue is up 11.7% over this week compared with the week before."


def test_a_metric_falls_back_to_the_call_arguments_and_reports_its_points() -> None:
    text = analyst("fetchMetrics", {"trend": "down", "changePct": -3.25, "points": [
        {"date": "2024-06-11", "value": 10}, {"date": "2024-06-12", "value": 8.5}]},
        arguments={"metricName": "churn_rate", "timeRange": "last_2_days"})
    assert text == ("Churn rate is down 3.25% over the last 2 days compared with the 2 days "
                    "before. Over 2 days (2024-06-11 to 2024-06-12) it ranged from 8.5 to 10; "
                    "the latest value is 8.5.")


def test_a_flat_metric_shows_its_signed_change() -> None:
    text = analyst("fetchMetrics", {"metricName": "orders", "timeRange": "last_7_days",
                                    "trend": "flat", "changePct": -0.4})
    assert text == "Orders is flat (-0.4%) over the last 7 days compared with the 7 days before."


def test_query_rows_show_the_count_and_the_first_rows() -> None:
    text = analyst("runQuery", {"columns": ["date", "value"], "rowCount": 7, "truncated": False,
                                "rows": [[f"2024-06-{d:02}", 100 + d] for d in range(12, 5, -1)]})
    assert text == ("The query returned 7 rows. First rows: date=2024-06-12, value=112; "
                    "date=2024-06-11, value=111; date=2024-06-10, value=110; "
                    "date=2024-06-09, value=109; date=2024-06-08, value=108.")


def test_a_single_value_query_reads_as_that_value() -> None:
    text = analyst("runQuery", {"columns": ["average"], "rows": [[16020.2345]], "rowCount": 1})
    assert text == "The query returned average = 16,020.23."


def test_an_empty_query_says_so() -> None:
    assert analyst("runQuery", {"columns": ["x"], "rows": [], "rowCount": 0}) == (
        "The query returned no rows.")


def test_results_of_other_applications_are_left_to_the_generic_rendering() -> None:
    assert support("weather", {"city": "Oslo"}) is None
    assert analyst("weather", {"city": "Oslo"}) is None


def test_failed_tools_are_left_to_the_generic_rendering() -> None:
    failed = ToolResult.of("createTicket", "Error: tool 'createTicket' failed: boom",
                           is_error=True)
    assert support_answer(failed, ()) is None
    assert analyst_answer(failed, ()) is None


@given(JSON)
def test_any_tool_result_gets_words_or_is_left_alone(value: Any) -> None:
    for formatter in (support_answer, analyst_answer):
        text = formatter(ToolResult.of("someTool", json.dumps(value)), ())
        assert text is None or text.strip()
