from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bloge.agent.builder
from bloge import (
    AgentBuilder,
    AgentDef,
    AgentDslCompiler,
    AgentMemoryStrategy,
    AgentToolRef,
    BlogeUsageError,
    Expression,
    OperatorRegistry,
    UnknownOperatorError,
)
from bloge.agent import AgentCall, Budget, MaxLengthGuard, OutputSchema, output_guard
from bloge.agent.handoffs import HandoffDef
from bloge.agent.named_agents import Where
from tests.runtime.scenarios import support_builder

#: A value for every field of AgentDef, none of them the default.
EVERY_FIELD: dict[str, Any] = {
    "id": "variant",
    "model": "gpt-4o",
    "system_prompt": "Be brief.",
    "max_turns": 3,
    "max_tool_concurrency": 2,
    "temperature": 0.5,
    "memory_strategy": AgentMemoryStrategy.SlidingWindow(4),
    "tools": (AgentToolRef.of("search", "Search"),),
    "exit_condition": Expression.compile("turn >= 2"),
    "streaming": True,
    "streaming_buffer_capacity": 8,
    "tool_timeout": 5.0,
    "max_tokens": 256,
    "tool_choice": "search",
    "stop": ("END",),
    "seed": 7,
    "parallel_tool_calls": False,
    "output": OutputSchema.from_json_schema("answer", {
        "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
        "additionalProperties": False}),
    "guards": (output_guard(MaxLengthGuard(max_chars=10), name="short"),),
    "budget": Budget(tokens=50_000, usd=0.5, tool_calls=40, model_calls=10, time=30.0),
    "thread_budget": Budget(usd=5.0),
    "fallback": ("claude-sonnet-4-5",),
    "agent_calls": (AgentCall("research", "researcher", Where("team.bloge", 3, 19, None, 10)),),
    "handoffs": (HandoffDef("billing", "billingAgent", "Billing questions."),),
}

#: How the builder sets each field of AgentDef.
SETTERS: dict[str, Callable[[AgentBuilder, Any], AgentBuilder]] = {
    "id": lambda builder, value: builder,  # AgentBuilder.create(id)
    "memory_strategy": lambda builder, value: builder.memory(value),
    "tools": lambda builder, tools: builder.tool(*tools),
    "stop": lambda builder, sequences: builder.stop(*sequences),
    "guards": lambda builder, guards: builder.guard(*guards),
    "fallback": lambda builder, models: builder.fallback(*models),
    "agent_calls": lambda builder, calls: builder.agent_calls(*calls),
    "handoffs": lambda builder, handoffs: [
        builder.handoff(h.name, h.agent_id, description=h.description) for h in handoffs][-1],
    **{name: lambda builder, value, name=name: getattr(builder, name)(value) for name in (
        "model", "system_prompt", "max_turns", "max_tool_concurrency", "temperature",
        "exit_condition", "streaming", "streaming_buffer_capacity", "tool_timeout",
        "max_tokens", "tool_choice", "seed", "parallel_tool_calls", "output", "budget",
        "thread_budget",
    )},
}


def default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def test_the_builder_produces_the_same_definition_as_the_dsl(fixtures: Path) -> None:
    compiled = AgentDslCompiler().compile_file(fixtures / "agent-customer-support.bloge")
    built = support_builder().build()
    assert built == compiled


def test_from_def_starts_a_variant_of_an_existing_definition(fixtures: Path) -> None:
    original = AgentDslCompiler().compile_file(fixtures / "streaming-analysis-agent.bloge")
    variant = AgentBuilder.from_def(original).max_turns(20).build()
    assert variant.max_turns == 20
    assert (variant.tools, variant.streaming, variant.streaming_buffer_capacity) == (
        original.tools, True, 32)


def test_from_def_then_build_gives_back_every_field_of_the_definition() -> None:
    names = [field.name for field in dataclasses.fields(AgentDef)]
    assert sorted(EVERY_FIELD) == sorted(names), "give EVERY_FIELD a value for each field"
    for field in dataclasses.fields(AgentDef):
        assert EVERY_FIELD[field.name] != default_of(field), f"{field.name} is its default"
    definition = AgentDef(**EVERY_FIELD)
    assert AgentBuilder.from_def(definition).build() == definition


def test_a_field_added_to_the_definition_is_carried_by_from_def(monkeypatch: pytest.MonkeyPatch) -> None:
    extended = dataclasses.make_dataclass(
        "AgentDef", [("owner", str, dataclasses.field(default=""))], bases=(AgentDef,),
        frozen=True, slots=True,
    )
    monkeypatch.setattr(bloge.agent.builder, "AgentDef", extended)
    definition = extended(**EVERY_FIELD, owner="support-team")
    assert AgentBuilder.from_def(definition).max_turns(4).build() == dataclasses.replace(
        definition, max_turns=4)


def test_the_builder_sets_every_field_of_the_definition() -> None:
    assert sorted(SETTERS) == sorted(f.name for f in dataclasses.fields(AgentDef)), (
        "give AgentBuilder a setter for each field of AgentDef, and SETTERS an entry")
    builder = AgentBuilder.create(EVERY_FIELD["id"])
    for name, value in EVERY_FIELD.items():
        builder = SETTERS[name](builder, value)
    assert builder.build() == AgentDef(**EVERY_FIELD)


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
def test_the_builder_applies_the_compiler_rules(call: Callable[[AgentBuilder], object],
                                                message: str) -> None:
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
