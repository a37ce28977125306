from __future__ import annotations

import pytest

from bloge import (
    AgentBuilder,
    AgentDslCompiler,
    AgentMemoryStrategy,
    BlogeUsageError,
    Expression,
    OperatorRegistry,
    UnknownOperatorError,
)
from tests.runtime.scenarios import support_builder


def test_the_builder_produces_the_same_definition_as_the_dsl(fixtures) -> None:
    compiled = AgentDslCompiler().compile_file(fixtures / "agent-customer-support.bloge")
    built = support_builder().build()
    assert built == compiled


def test_from_def_starts_a_variant_of_an_existing_definition(fixtures) -> None:
    original = AgentDslCompiler().compile_file(fixtures / "streaming-analysis-agent.bloge")
    variant = AgentBuilder.from_def(original).max_turns(20).build()
    assert variant.max_turns == 20
    assert (variant.tools, variant.streaming, variant.streaming_buffer_capacity) == (
        original.tools, True, 32)


def test_exit_condition_accepts_a_compiled_expression() -> None:
    condition = Expression.compile("turn >= 2")
    built = AgentBuilder.create("a").model("m").exit_condition(condition).build()
    assert built.exit_condition is condition


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.max_turns(0), "max_turns must be at least 1, got 0"),
        (lambda b: b.max_tool_concurrency(0), "max_tool_concurrency must be at least 1"),
        (lambda b: b.temperature(3.0), "temperature must be between 0 and 2, got 3.0"),
        (lambda b: b.streaming_buffer_capacity(0), "streaming_buffer_capacity must be at least 1"),
        (lambda b: b.memory(AgentMemoryStrategy.TokenBudget(0)), "token_budget(n) needs n >= 1"),
        (lambda b: b.model(""), "model must not be empty"),
        (lambda b: b.exit_condition("tool_args.x == 1"), "tool_args is only in scope"),
        (lambda b: b.exit_condition("finish == 'stop'"), "did you mean 'finish_reason'?"),
        (lambda b: b.tool("t", "Op").tool("t", "Op"), "duplicate tool name 't'"),
        (lambda b: b.build(), "has no model"),
    ],
)
def test_the_builder_applies_the_compiler_rules(call, message: str) -> None:
    with pytest.raises(BlogeUsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(AgentBuilder.create("a"))


def test_a_builder_with_a_registry_rejects_unknown_operators() -> None:
    builder = AgentBuilder.create("a", registry=OperatorRegistry({"Search": lambda i: i}))
    with pytest.raises(UnknownOperatorError, match="did you mean 'Search'"):
        builder.tool("t", "Serch")


def test_custom_memory_is_python_only() -> None:
    factory = object()
    built = AgentBuilder.create("a").model("m").memory(AgentMemoryStrategy.Custom(factory)).build()
    assert built.memory_strategy == AgentMemoryStrategy.Custom(factory)
