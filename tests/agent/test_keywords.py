"""Every keyword of the appendix, its default, and its value type."""

from __future__ import annotations

import pytest

from bloge import AgentDef, AgentDslCompiler, AgentMemoryStrategy


def compile_body(body: str) -> AgentDef:
    return AgentDslCompiler().compile(f"agent probe {{\n{body}\n}}")


def test_defaults_of_the_appendix() -> None:
    agent = compile_body('model = "m"')
    assert agent.system_prompt is None
    assert agent.max_turns == 10
    assert agent.max_tool_concurrency is None
    assert agent.temperature is None
    assert agent.memory_strategy == AgentMemoryStrategy.Full()
    assert agent.tools == ()
    assert agent.exit_condition is None
    assert agent.streaming is False
    assert agent.streaming_buffer_capacity == 16


@pytest.mark.parametrize(
    ("binding", "field", "value"),
    [
        ('system_prompt = "Be brief."', "system_prompt", "Be brief."),
        ("system_prompt = null", "system_prompt", None),
        ("max_turns = 3", "max_turns", 3),
        ("max_tool_concurrency = 4", "max_tool_concurrency", 4),
        ("max_tool_concurrency = null", "max_tool_concurrency", None),
        ("temperature = 0", "temperature", 0.0),
        ("temperature = 2.0", "temperature", 2.0),
        ("streaming = true", "streaming", True),
        ("streaming_buffer_capacity = 64", "streaming_buffer_capacity", 64),
        ("memory = full()", "memory_strategy", AgentMemoryStrategy.Full()),
        ("memory = sliding_window(5)", "memory_strategy", AgentMemoryStrategy.SlidingWindow(5)),
        ("memory = token_budget(900)", "memory_strategy", AgentMemoryStrategy.TokenBudget(900)),
        ("memory = summary(12)", "memory_strategy", AgentMemoryStrategy.Summary(12)),
        ('system_prompt = """multi\nline"""', "system_prompt", "multi\nline"),
        ("max_turns = 2 * 3", "max_turns", 6),
    ],
)
def test_each_keyword_sets_its_field(binding: str, field: str, value: object) -> None:
    agent = compile_body(f'model = "m"\n{binding}')
    assert getattr(agent, field) == value
    if field == "temperature":
        assert isinstance(agent.temperature, float)


def test_stream_agent_is_shorthand_for_streaming_true() -> None:
    agent = AgentDslCompiler().compile('stream agent s { model = "m" }')
    assert agent.streaming is True


def test_exit_condition_null_means_never_exit_early() -> None:
    assert compile_body('model = "m"\nexit_condition = null').exit_condition is None


def test_a_tool_without_description_or_input_has_an_empty_schema() -> None:
    agent = compile_body('model = "m"\ntool ping : PingOperator {}')
    tool = agent.tool("ping")
    assert tool.description == ""
    assert tool.tool_definition.parameters == {"type": "object", "properties": {}, "required": []}
    assert tool.graph.nodes[0].inputs is None


@pytest.mark.parametrize("where", ["root", "graph", "phase", "state"])
def test_agents_compile_at_the_root_and_inside_graph_phase_and_state(where: str) -> None:
    agent = 'agent inner { model = "m" }'
    source = {
        "root": agent,
        "graph": f"graph g {{ {agent} }}",
        "phase": f"graph g {{ phase p {{ {agent} }} }}",
        "state": f"graph g {{ phase p {{ state s {{ {agent} }} }} }}",
    }[where]
    assert AgentDslCompiler().compile(source).id == "inner"


def test_compile_all_returns_every_agent_in_document_order() -> None:
    source = 'agent a { model = "m" }\ngraph g { stream agent b { model = "m" } }\nagent c { model = "m" }'
    assert [a.id for a in AgentDslCompiler().compile_all(source)] == ["a", "b", "c"]
