"""The analyst's argument filler: the SQL the offline model writes over the metrics table."""

from __future__ import annotations

from bloge import AgentDef, ToolDefinition
from bloge.llm.offline import fill_arguments
from examples.analyst.queries import fill_arguments as analyst_arguments


def by_name(agent: AgentDef, name: str) -> ToolDefinition:
    return next(t.tool_definition for t in agent.tools if t.name == name)


def filled(agent: AgentDef, tool_name: str, message: str) -> dict[str, object]:
    tool = by_name(agent, tool_name)
    return dict(analyst_arguments(tool, message, fill_arguments(tool, message)))


def test_a_sql_tool_gets_a_select_over_the_metric(analyst_agent: AgentDef) -> None:
    assert filled(analyst_agent, "runQuery", "revenue over the last 7 days") == {
        "sql": "SELECT date, value FROM metrics WHERE name = 'revenue' ORDER BY date DESC LIMIT 7"}


def test_an_aggregate_question_gets_an_aggregate(analyst_agent: AgentDef) -> None:
    assert filled(analyst_agent, "runQuery", "total orders in the last 7 days") == {
        "sql": "SELECT SUM(value) AS total FROM (SELECT date, value FROM metrics "
               "WHERE name = 'orders' ORDER BY date DESC LIMIT 7)"}


def test_sql_written_in_the_message_is_kept(analyst_agent: AgentDef) -> None:
    assert filled(analyst_agent, "runQuery", "run SELECT name FROM metrics LIMIT 2") == {
        "sql": "SELECT name FROM metrics LIMIT 2"}


def test_a_tool_without_sql_keeps_its_arguments(analyst_agent: AgentDef) -> None:
    assert filled(analyst_agent, "fetchMetrics", "How is revenue trending this week?") == {
        "metricName": "revenue", "timeRange": "this_week"}
