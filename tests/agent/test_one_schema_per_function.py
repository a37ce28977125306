"""One function, one tool schema: ``def add(a: int, b: int)`` reaches the model typed the same
way through ``Agent(llm, [add])``, ``AgentBuilder.tool`` (with or without an input mapping)
and the DSL, and runs the same way."""

from __future__ import annotations

from typing import Any

import pytest

from bloge import Agent, AgentBuilder, AgentDslCompiler, LlmChatOperator, OperatorRegistry
from bloge.llm import ScriptedProvider
from bloge.llm.testing import tool_call_response


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TYPED = {"a": {"type": "integer"}, "b": {"type": "integer"}}


def registry() -> OperatorRegistry:
    return OperatorRegistry().register("add", add)


def facade_parameters() -> dict[str, Any]:
    agent = Agent(ScriptedProvider("done"), [add])
    return dict(agent.operator.agent_def.tool("add").tool_definition.parameters)


def test_a_builder_tool_without_input_passes_the_functions_own_parameters_through() -> None:
    definition = AgentBuilder.create("a", registry=registry()).model("m").tool("add", "add").build()
    assert dict(definition.tool("add").tool_definition.parameters) == facade_parameters()


def test_a_builder_tool_with_an_input_mapping_types_properties_from_the_parameters() -> None:
    definition = (AgentBuilder.create("a", registry=registry()).model("m")
                  .tool("add", "add", input={"a": "tool_args.a", "b": "tool_args.b"}).build())
    parameters = definition.tool("add").tool_definition.parameters
    assert parameters["properties"] == TYPED == facade_parameters()["properties"]
    assert parameters["required"] == ["a", "b"]


def test_a_dsl_tool_types_properties_from_the_parameters() -> None:
    source = ('agent a { model = "m"\n'
              ' tool add : add { input { a = tool_args.a\n b = tool_args.b } }\n'
              ' tool plus : add {} }')
    agent = AgentDslCompiler(registry()).compile(source)
    assert agent.tool("add").tool_definition.parameters["properties"] == TYPED
    assert dict(agent.tool("plus").tool_definition.parameters) == facade_parameters()


@pytest.mark.parametrize("mapping", [None, {"a": "tool_args.a", "b": "tool_args.b"}])
def test_a_builder_tool_calls_the_function_with_the_models_arguments(
    mapping: dict[str, str] | None,
) -> None:
    provider = ScriptedProvider(tool_call_response("add", '{"a": 2, "b": 3}'), "5")
    tools = registry().register("llmChat", LlmChatOperator(provider))
    operator = (AgentBuilder.create("a", registry=tools).model("m")
                .tool("add", "add", input=mapping).to_operator("a"))
    output = operator.execute("2 + 3?")
    assert [m.content for m in output.messages if m.role == "tool"] == ["5"]
