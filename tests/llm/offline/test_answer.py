from __future__ import annotations

import json
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline.answer import ToolResult, compose_answer


def answer(tool_name: str, value: Any, *, arguments: dict[str, Any] | None = None,
           tools: tuple[ToolDefinition, ...] = ()) -> str:
    result = ToolResult(tool_name, json.dumps(value), arguments or {})
    return compose_answer([result], tools=tools)


def test_an_article_leads_with_its_id_and_summary() -> None:
    text = answer("searchKnowledgeBase", {
        "articleId": "KB-RESET-001",
        "summary": "Reset the password from Settings > Security and confirm the email link.",
        "related": ["KB-LOGIN-002"]})
    assert text == ("KB-RESET-001 — Reset the password from Settings > Security and confirm the "
                    "email link.")


def test_no_article_suggests_the_other_tools_instead_of_guessing(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    text = answer("searchKnowledgeBase", {"articleId": None, "summary": "No article matched."},
                  tools=support_tools)
    assert text == ("I couldn't find a knowledge-base article that answers this. I can also "
                    "create a support ticket for follow-up or escalate the conversation to a "
                    "human support agent: just ask.")


def test_a_ticket_is_quoted_with_its_priority() -> None:
    text = answer("createTicket", {"ticketId": "TCK-1001", "status": "open",
                                   "priority": "normal", "title": "Refund for order 1234"})
    assert text.startswith("I created ticket TCK-1001 (priority normal): Refund for order 1234.")


def test_an_escalation_names_the_queue_and_the_wait() -> None:
    text = answer("escalateToHuman", {"queue": "human-support", "etaMinutes": 5, "reason": "r"})
    assert text == ("I've handed this conversation to a human agent in the human-support queue; "
                    "the expected wait is about 5 minutes.")


def test_a_metric_reads_as_a_trend_over_its_period() -> None:
    text = answer("fetchMetrics", {"metricName": "revenue", "timeRange": "this_week",
                                   "trend": "up", "changePct": 11.7})
    assert text == "Revenue is up 11.7% over this week compared with the week before."


def test_a_metric_falls_back_to_the_call_arguments_and_reports_its_points() -> None:
    text = answer("fetchMetrics", {"trend": "down", "changePct": -3.25, "points": [
        {"date": "2024-06-11", "value": 10}, {"date": "2024-06-12", "value": 8.5}]},
        arguments={"metricName": "churn_rate", "timeRange": "last_2_days"})
    assert text == ("Churn rate is down 3.25% over the last 2 days compared with the 2 days "
                    "before. Over 2 days (2024-06-11 to 2024-06-12) it ranged from 8.5 to 10; "
                    "the latest value is 8.5.")


def test_a_flat_metric_shows_its_signed_change() -> None:
    text = answer("fetchMetrics", {"metricName": "orders", "timeRange": "last_7_days",
                                   "trend": "flat", "changePct": -0.4})
    assert text == "Orders is flat (-0.4%) over the last 7 days compared with the 7 days before."


def test_query_rows_show_the_count_and_the_first_rows() -> None:
    text = answer("runQuery", {"columns": ["date", "value"], "rowCount": 7, "truncated": False,
                               "rows": [[f"2024-06-{d:02}", 100 + d] for d in range(12, 5, -1)]})
    assert text == ("The query returned 7 rows. First rows: date=2024-06-12, value=112; "
                    "date=2024-06-11, value=111; date=2024-06-10, value=110; "
                    "date=2024-06-09, value=109; date=2024-06-08, value=108.")


def test_a_single_value_query_reads_as_that_value() -> None:
    text = answer("runQuery", {"columns": ["average"], "rows": [[16020.2345]], "rowCount": 1})
    assert text == "The query returned average = 16,020.23."


def test_an_empty_query_says_so() -> None:
    assert answer("runQuery", {"columns": ["x"], "rows": [], "rowCount": 0}) == (
        "The query returned no rows.")


def test_an_error_says_what_went_wrong_and_what_to_try() -> None:
    result = ToolResult("fetchMetrics", "Error: tool 'fetchMetrics' failed: ValueError: unknown "
                        "metric 'churn'; did you mean 'churn_rate'? (known metrics: revenue)",
                        is_error=True)
    assert compose_answer([result]) == (
        "The fetchMetrics tool could not do it: unknown metric 'churn'; did you mean "
        "'churn_rate'? (known metrics: revenue). Try again with 'churn_rate'.")


def test_a_timeout_suggests_trying_again() -> None:
    result = ToolResult("slow", "Error: tool 'slow' timed out after 2 s", is_error=True)
    assert compose_answer([result]).endswith("It may be busy; try again in a moment.")


def test_an_unknown_shape_shows_its_top_level_fields() -> None:
    text = answer("weather", {"city": "Oslo", "celsius": 4.5, "sunny": False,
                              "hours": [1, 2], "extra": {"x": 1}})
    assert text == "weather returned city: Oslo; celsius: 4.5; sunny: false; hours: 2 items."


def test_an_unknown_shape_leads_with_its_summary_text() -> None:
    text = answer("lookup", {"summary": "All systems go.", "count": 3})
    assert text == "All systems go.\nlookup returned count: 3."


def test_plain_text_results_are_quoted() -> None:
    assert compose_answer([ToolResult("echo", "hello there")]) == "echo returned: hello there"


def test_an_empty_result_says_nothing_came_back() -> None:
    assert compose_answer([ToolResult("echo", "")]) == "echo returned nothing."


def test_each_result_gets_its_own_paragraph() -> None:
    results = [ToolResult("a", '{"ticketId": "TCK-1", "priority": "low", "title": "t"}'),
               ToolResult("b", '{"queue": "q", "etaMinutes": 1}')]
    first, second = compose_answer(results).split("\n\n")
    assert first.startswith("I created ticket TCK-1")
    assert second.endswith("about 1 minute.")


def test_no_results_say_there_is_nothing_to_report() -> None:
    assert "nothing to report" in compose_answer([])
