"""The two public example files compile to exactly the definitions of CONFORMANCE.md."""

from __future__ import annotations

from pathlib import Path

from bloge import AgentDslCompiler, AgentMemoryStrategy, Expression
from bloge.agent.functions import agent_functions


def _schema(*names: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


def test_customer_support_compiles_to_the_documented_definition(fixtures: Path) -> None:
    agent = AgentDslCompiler().compile_file(fixtures / "agent-customer-support.bloge")
    assert agent.id == "customerSupport"
    assert agent.streaming is False
    assert agent.model == "gpt-4o"
    assert agent.system_prompt == "You are a helpful customer support agent."
    assert agent.max_turns == 6
    assert agent.max_tool_concurrency == 2
    assert agent.temperature == 0.2
    assert agent.memory_strategy == AgentMemoryStrategy.SlidingWindow(20)
    assert agent.exit_condition == Expression.compile(
        'finish_reason == "stop" || tool_call("escalateToHuman")', functions=agent_functions()
    )
    assert agent.streaming_buffer_capacity == 16
    assert [(t.name, t.operator_ref, t.description) for t in agent.tools] == [
        ("searchKnowledgeBase", "KBSearchOperator", "Search the knowledge base for a relevant article"),
        ("createTicket", "CreateTicketOperator", "Create a support ticket for follow-up"),
        ("escalateToHuman", "EscalateOperator", "Escalate the conversation to a human support agent"),
    ]
    assert [t.tool_definition.parameters for t in agent.tools] == [
        _schema("query"),
        _schema("title", "description", "priority"),
        _schema("reason"),
    ]


def test_the_streaming_analyst_compiles_to_the_documented_definition(fixtures: Path) -> None:
    agent = AgentDslCompiler().compile_file(fixtures / "streaming-analysis-agent.bloge")
    assert agent.id == "dataAnalyst"
    assert agent.streaming is True
    assert agent.streaming_buffer_capacity == 32
    assert agent.model == "gpt-4o"
    assert agent.system_prompt == "You are a data analyst. Use tools to fetch and interpret metrics."
    assert (agent.max_turns, agent.max_tool_concurrency, agent.temperature) == (8, 3, 0.1)
    assert agent.memory_strategy == AgentMemoryStrategy.TokenBudget(4096)
    assert agent.exit_condition == Expression.compile('finish_reason == "stop"')
    assert [(t.name, t.operator_ref, t.description) for t in agent.tools] == [
        ("fetchMetrics", "MetricsFetchOperator", "Fetch time-series metrics by name"),
        ("runQuery", "QueryRunnerOperator", "Run a SQL query against the analytics database"),
    ]
    assert [t.tool_definition.parameters for t in agent.tools] == [
        _schema("metricName", "timeRange"),
        _schema("sql"),
    ]


def test_each_tool_carries_a_one_node_subgraph_and_its_result_node(fixtures: Path) -> None:
    agent = AgentDslCompiler().compile_file(fixtures / "agent-customer-support.bloge")
    tool = agent.tool("createTicket")
    (node,) = tool.graph.nodes
    assert node.operator_ref == "CreateTicketOperator"
    assert tool.result_node_id == node.id
    assert tool.tool_definition.name == "createTicket"
    assert node.inputs is not None
    assert {k: e.source for k, e in node.inputs.items()} == {
        "title": "tool_args.title",
        "description": "tool_args.description",
        "priority": "tool_args.priority",
    }
