from __future__ import annotations

import json
from typing import Any

import pytest

from bloge import ToolDefinition
from bloge.llm.offline.arguments import fill_arguments, subject_word
from bloge.llm.offline.parameters import Kind, kind_of


def tool(properties: dict[str, Any], *, name: str = "doIt", description: str = "",
         required: list[str] | None = None) -> ToolDefinition:
    schema = {"type": "object", "properties": properties,
              "required": list(properties) if required is None else required}
    return ToolDefinition(name, description, schema)


def by_name(tools: tuple[ToolDefinition, ...], name: str) -> ToolDefinition:
    return next(t for t in tools if t.name == name)


def test_the_knowledge_base_query_is_the_message(support_tools: tuple[ToolDefinition, ...]) -> None:
    kb = by_name(support_tools, "searchKnowledgeBase")
    assert fill_arguments(kb, "How do I reset my password?") == {
        "query": "How do I reset my password?"}


def test_an_escalation_reason_quotes_the_user(support_tools: tuple[ToolDefinition, ...]) -> None:
    escalate = by_name(support_tools, "escalateToHuman")
    assert fill_arguments(escalate, "I want a human agent right now.") == {
        "reason": 'The user asked for a human agent: "I want a human agent right now."'}


def test_a_ticket_gets_a_short_title_the_message_and_a_normal_priority(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    ticket = by_name(support_tools, "createTicket")
    message = "I need a refund for order 1234, please open a ticket"
    assert fill_arguments(ticket, message) == {
        "title": "I need a refund for order 1234", "description": message, "priority": "normal"}


def test_an_urgent_ticket_gets_the_urgent_priority(support_tools: tuple[ToolDefinition, ...]) -> None:
    ticket = by_name(support_tools, "createTicket")
    assert fill_arguments(ticket, "The checkout is broken, urgent!")["priority"] == "urgent"


def test_metrics_get_the_metric_word_and_a_snake_case_range(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    metrics = by_name(analyst_tools, "fetchMetrics")
    assert fill_arguments(metrics, "How is revenue trending this week?") == {
        "metricName": "revenue", "timeRange": "this_week"}


@pytest.mark.parametrize(
    ("message", "metric"),
    [("How did churn rate do this month?", "churn_rate"),
     ("active_users over the past 2 weeks", "active_users"),
     ("what about signups?", "signups")],
)
def test_metric_names_of_two_words_are_joined(
    analyst_tools: tuple[ToolDefinition, ...], message: str, metric: str,
) -> None:
    assert fill_arguments(by_name(analyst_tools, "fetchMetrics"), message)["metricName"] == metric


def test_the_range_defaults_to_the_last_seven_days(analyst_tools: tuple[ToolDefinition, ...]) -> None:
    metrics = by_name(analyst_tools, "fetchMetrics")
    assert fill_arguments(metrics, "show me orders")["timeRange"] == "last_7_days"


METRICS = "metrics(date TEXT, name TEXT, value REAL)"


def test_without_a_schema_a_sql_tool_reads_the_table_its_subject_names(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    query = by_name(analyst_tools, "runQuery")
    assert fill_arguments(query, "orders over the last 7 days") == {
        "sql": "SELECT * FROM orders LIMIT 7"}


def test_without_a_schema_or_a_subject_no_statement_is_invented() -> None:
    sql_tool = tool({"sql": {"type": "string"}}, name="runSql")
    assert fill_arguments(sql_tool, "the last 7 days") == {"sql": ""}


def test_a_long_format_schema_filters_to_the_metric() -> None:
    sql_tool = tool({"sql": {"type": "string"}}, name="runSql")
    assert fill_arguments(sql_tool, "revenue over the last 7 days", hints=[METRICS]) == {
        "sql": "SELECT date, value FROM metrics WHERE name = 'revenue' ORDER BY date DESC LIMIT 7"}


def test_a_sql_tool_aggregates_when_asked() -> None:
    sql_tool = tool({"sql": {"type": "string"}}, name="runSql")
    assert fill_arguments(sql_tool, "average revenue over the last 30 days", hints=[METRICS]) == {
        "sql": "SELECT AVG(value) AS average FROM (SELECT date, value FROM metrics "
               "WHERE name = 'revenue' ORDER BY date DESC LIMIT 30)"}


def test_sql_written_in_the_message_is_used_as_it_stands(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    query = by_name(analyst_tools, "runQuery")
    assert fill_arguments(query, "please run SELECT name FROM metrics LIMIT 2;") == {
        "sql": "SELECT name FROM metrics LIMIT 2"}


def test_a_schema_in_the_system_prompt_picks_the_table() -> None:
    sql_tool = tool({"sql": {"type": "string"}}, name="runSql")
    hints = ["Tables: daily_metrics(date TEXT, revenue REAL, orders INTEGER)"]
    assert fill_arguments(sql_tool, "revenue this week", hints=hints) == {
        "sql": "SELECT date, revenue FROM daily_metrics ORDER BY date DESC LIMIT 7"}


def test_quotes_in_the_message_never_reach_the_sql() -> None:
    sql_tool = tool({"sql": {"type": "string"}}, name="runSql")
    statement = fill_arguments(sql_tool, "what's up with 'revenue'; DROP TABLE x",
                               hints=[METRICS])["sql"]
    assert statement == (
        "SELECT date, value FROM metrics WHERE name = 'revenue' ORDER BY date DESC LIMIT 7")


def test_an_enum_takes_the_value_the_message_mentions() -> None:
    colour = tool({"colour": {"type": "string", "enum": ["red", "green", "blue"]}})
    assert fill_arguments(colour, "make it green") == {"colour": "green"}


def test_an_enum_falls_back_to_its_first_value() -> None:
    colour = tool({"colour": {"type": "string", "enum": ["red", "green", "blue"]}})
    assert fill_arguments(colour, "whatever you like") == {"colour": "red"}


def test_an_enum_priority_follows_urgency_words() -> None:
    ticket = tool({"priority": {"enum": ["low", "normal", "high", "urgent"]}})
    assert fill_arguments(ticket, "fix this immediately") == {"priority": "high"}


def test_booleans_are_false_and_numbers_come_from_the_message() -> None:
    filled = fill_arguments(tool({"dryRun": {"type": "boolean"}, "limit": {"type": "integer"},
                                  "ratio": {"type": "number"}}), "show 25 rows")
    assert filled == {"dryRun": False, "limit": 25, "ratio": 25}


def test_numeric_arguments_take_the_messages_numbers_in_order() -> None:
    add = tool({"a": {"type": "integer"}, "b": {"type": "integer"}}, name="add")
    assert fill_arguments(add, "add 2 and 3") == {"a": 2, "b": 3}


def test_a_number_without_one_in_the_message_is_one_within_bounds() -> None:
    filled = fill_arguments(tool({"count": {"type": "integer", "minimum": 5}}), "some rows")
    assert filled == {"count": 5}


def test_nested_objects_are_filled_property_by_property() -> None:
    nested = tool({"filter": {"type": "object", "properties": {
        "query": {"type": "string"}, "orderId": {"type": "string"}},
        "required": ["query", "orderId"]}})
    assert fill_arguments(nested, "where is order 1234?") == {
        "filter": {"query": "where is order 1234?", "orderId": "1234"}}


def test_only_required_properties_are_filled() -> None:
    partial = tool({"query": {"type": "string"}, "limit": {"type": "integer"}},
                   required=["query"])
    assert fill_arguments(partial, "shipping times") == {"query": "shipping times"}


def test_a_listed_option_in_the_parameter_description_is_preferred() -> None:
    metrics = tool({"metricName": {"type": "string",
                                   "description": "one of revenue, churn_rate, active_users"}})
    assert fill_arguments(metrics, "how many active users do we have?") == {
        "metricName": "active_users"}


def test_the_arguments_are_json_ready(support_tools: tuple[ToolDefinition, ...]) -> None:
    for definition in support_tools:
        filled = fill_arguments(definition, "Ünïcode — “quotes” and \\ backslashes")
        assert json.loads(json.dumps(filled)) == filled


@pytest.mark.parametrize(
    ("name", "schema", "kind"),
    [("query", {"type": "string"}, Kind.FREE_TEXT),
     ("title", {"type": "string"}, Kind.TITLE),
     ("name", {}, Kind.TITLE),
     ("metricName", {"type": "string"}, Kind.SUBJECT),
     ("timeRange", {"type": "string"}, Kind.TIME_RANGE),
     ("priority", {"type": "string"}, Kind.PRIORITY),
     ("reason", {"type": "string"}, Kind.REASON),
     ("orderId", {"type": "string"}, Kind.IDENTIFIER),
     ("sql", {"type": "string"}, Kind.SQL),
     ("flag", {"type": ["boolean", "null"]}, Kind.BOOLEAN),
     ("colour", {"enum": ["red"]}, Kind.CHOICE),
     ("whatever", {"type": "string"}, Kind.TEXT)],
)
def test_parameters_are_known_by_schema_and_name(name: str, schema: dict[str, Any], kind: Kind) -> None:
    assert kind_of(name, schema, tool_words=frozenset()) is kind


def test_a_query_parameter_of_a_sql_tool_wants_sql() -> None:
    assert kind_of("query", {"type": "string"}, tool_words=frozenset({"sql"})) is Kind.SQL


def test_the_subject_skips_time_change_and_excluded_words() -> None:
    assert subject_word("How is revenue trending this week?") == "revenue"
    assert subject_word("fetch the metric for orders", exclude=frozenset({"fetch", "metric"})) == (
        "orders")
    assert subject_word("how is it going this week?") is None
