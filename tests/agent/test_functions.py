"""The agent's expression functions: ``tool_call(name)``, contributed through the DSL's
extension SPI like any third party's function."""

from __future__ import annotations

import pytest

from bloge import AgentBuilder, AgentDslCompiler, BlogeUsageError, CompileError
from bloge.agent import AgentExtensionProvider
from bloge.dsl import STANDARD_LIBRARY, DslCompiler


def test_tool_call_asks_whether_this_turn_called_a_tool() -> None:
    expression = AgentBuilder.create("a").model("m").tool("escalateToHuman", "Escalate").exit_condition(
        'finish_reason == "stop" || tool_call("escalateToHuman")').build().exit_condition
    assert expression is not None
    calls = [{"id": "c1", "name": "escalateToHuman", "arguments": {}}]
    assert expression.evaluate({"finish_reason": "tool_calls", "tool_calls": calls}) is True
    assert expression.evaluate({"finish_reason": "tool_calls", "tool_calls": []}) is False
    assert expression.evaluate({"finish_reason": "stop"}) is True


def test_tool_call_is_contributed_by_the_agent_extension() -> None:
    contributed = AgentExtensionProvider().functions()
    assert set(contributed) == {"tool_call"}
    assert contributed["tool_call"].reads_scope
    assert "tool_call" not in STANDARD_LIBRARY


def test_the_generic_compiler_gives_agent_blocks_tool_call_through_the_extension() -> None:
    (block,) = DslCompiler([AgentExtensionProvider()]).compile(
        'agent a { model = "m" exit_condition = tool_call("search") tool search : Search {} }')
    calls = [{"id": "c1", "name": "search", "arguments": {}}]
    assert block.definition.exit_condition.evaluate({"tool_calls": calls}) is True


def test_tool_call_with_a_computed_name_reads_the_same_calls() -> None:
    agent = AgentDslCompiler().compile(
        'agent a { model = "m" exit_condition = tool_call(finish_reason + "Tool") }')
    assert agent.exit_condition is not None
    scope = {"finish_reason": "search", "tool_calls": [{"id": "c1", "name": "searchTool"}]}
    assert agent.exit_condition.evaluate(scope) is True


def test_tool_call_takes_exactly_one_argument() -> None:
    with pytest.raises(CompileError, match=r"tool_call\(\) takes 1 argument, got 2"):
        AgentBuilder.create("a").model("m").exit_condition('tool_call("a", "b")')


def test_tool_call_of_a_tool_the_agent_lacks_is_a_compile_error_with_a_suggestion() -> None:
    source = ('agent a {\n  model = "m"\n  exit_condition = tool_call("getWether")\n'
              '  tool getWeather : Weather { input { city = tool_args.city } }\n}\n')
    with pytest.raises(CompileError) as caught:
        AgentDslCompiler().compile(source, filename="weather.bloge")
    assert str(caught.value).startswith(
        "weather.bloge:3:30: tool_call('getWether') names a tool this agent does not have; "
        "did you mean 'getWeather'?")


def test_tool_call_in_an_agent_without_tools_is_a_compile_error() -> None:
    with pytest.raises(CompileError, match=r"tool_call\('search'\) names a tool this agent "
                                           r"does not have \(it has none\)"):
        AgentDslCompiler().compile('agent a { model = "m" exit_condition = tool_call("search") }')


def test_the_builder_rejects_tool_call_of_a_tool_the_agent_lacks() -> None:
    builder = AgentBuilder.create("a").model("m").tool("search", "Search").exit_condition(
        'tool_call("serch")')
    with pytest.raises(BlogeUsageError, match="did you mean 'search'"):
        builder.build()
