"""``max_tokens``, ``tool_choice``, ``stop`` and ``seed``: how an agent asks its model to
answer, the same from the DSL, ``AgentBuilder`` and ``Agent``, and sent with every model call."""

from __future__ import annotations

import json

import pytest

from bloge import (
    Agent,
    AgentBuilder,
    AgentDef,
    AgentDslCompiler,
    AgentLoopOperator,
    BlogeUsageError,
    DslError,
    LlmChatOperator,
    OperatorRegistry,
)
from bloge.llm import LlmRequest, ScriptedProvider, tool_call_response

WITH_TOOLS = """agent helper {
  model = "m"
%s
  tool lookup : Lookup { input { q = tool_args.q } }
  tool ship : Ship {}
}"""


def compile_body(body: str) -> AgentDef:
    return AgentDslCompiler().compile(WITH_TOOLS % body, filename="helper.bloge")


def compile_error(body: str) -> str:
    with pytest.raises(DslError) as caught:
        compile_body(body)
    return str(caught.value)


def test_by_default_an_agent_sets_none_of_them() -> None:
    agent = compile_body("")
    assert (agent.max_tokens, agent.tool_choice, agent.stop, agent.seed) == (None, None, (), None)


@pytest.mark.parametrize(("binding", "field", "value"), [
    ("max_tokens = 256", "max_tokens", 256),
    ('tool_choice = "auto"', "tool_choice", "auto"),
    ('tool_choice = "required"', "tool_choice", "required"),
    ('tool_choice = "none"', "tool_choice", "none"),
    ('tool_choice = "lookup"', "tool_choice", "lookup"),
    ('stop = ["END", "\\n\\n"]', "stop", ("END", "\n\n")),
    ("seed = 7", "seed", 7),
    ("parallel_tool_calls = false", "parallel_tool_calls", False),
])
def test_each_keyword_sets_its_field(binding: str, field: str, value: object) -> None:
    assert getattr(compile_body(f"  {binding}"), field) == value


def test_a_tool_choice_naming_no_tool_is_a_compile_error_with_a_suggestion() -> None:
    message = compile_error('  tool_choice = "lookp"')
    assert message.startswith("helper.bloge:3:3: tool_choice 'lookp' is not one of the agent's "
                              "tools; did you mean 'lookup'?")


def test_tool_choice_required_without_tools_is_a_compile_error() -> None:
    with pytest.raises(DslError, match='tool_choice = "required" needs a tool'):
        AgentDslCompiler().compile('agent a { model = "m"\n tool_choice = "required" }')


@pytest.mark.parametrize(("binding", "message"), [
    ("max_tokens = 0", "max_tokens must be at least 1, got 0"),
    ('max_tokens = "64"', "max_tokens must be a whole number, got the string '64'"),
    ('stop = "END"', "stop must be a list of non-empty strings, got the string 'END'"),
    ("stop = [1]", "stop must be a list of non-empty strings, got a list holding the number 1"),
    ("seed = 1.5", "seed must be a whole number, got the number 1.5"),
    ('parallel_tool_calls = "no"', "parallel_tool_calls must be true or false"),
    ("tool_choice = 3", "tool_choice must be a string"),
])
def test_a_bad_value_is_a_compile_error(binding: str, message: str) -> None:
    assert message in compile_error(f"  {binding}")


def test_the_builder_sets_them_with_the_same_rules() -> None:
    built = (AgentBuilder.create("helper").model("m").max_tokens(64).stop("END").seed(3)
             .tool("lookup", "Lookup").tool_choice("lookup").build())
    assert (built.max_tokens, built.stop, built.seed, built.tool_choice) == (
        64, ("END",), 3, "lookup")
    with pytest.raises(BlogeUsageError, match="max_tokens must be at least 1"):
        AgentBuilder.create("helper").max_tokens(0)


def test_the_builder_refuses_a_tool_choice_naming_no_tool_with_a_suggestion() -> None:
    builder = AgentBuilder.create("helper").model("m").tool("lookup", "Lookup")
    with pytest.raises(BlogeUsageError, match="did you mean 'lookup'"):
        builder.tool_choice("lookp").build()


def run_once(definition: AgentDef, model: ScriptedProvider) -> list[LlmRequest]:
    registry = (OperatorRegistry().register("llmChat", LlmChatOperator(model))
                .register("Lookup", lambda input: {"found": input["q"]}))
    AgentLoopOperator("helper", definition, registry).execute("Find x")
    return model.requests


def test_every_model_call_of_a_run_carries_them() -> None:
    definition = (AgentBuilder.create("helper").model("m").max_tokens(64).stop("END").seed(3)
                  .tool("lookup", "Lookup", input={"q": "tool_args.q"})
                  .tool_choice("required").build())
    model = ScriptedProvider(tool_call_response("lookup", json.dumps({"q": "x"})), "Found.")
    requests = run_once(definition, model)
    assert len(requests) == 2
    for request in requests:
        assert (request.max_tokens, request.stop, request.seed, request.tool_choice) == (
            64, ("END",), 3, "required")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_the_agent_facade_takes_max_tokens_and_tool_choice() -> None:
    model = ScriptedProvider(tool_call_response("add", '{"a": 1, "b": 2}'), "3")
    assert Agent(model, [add], model="m", max_tokens=32, tool_choice="add").run("1+2?") == "3"
    assert {(r.max_tokens, r.tool_choice) for r in model.requests} == {(32, "add")}


def test_the_agent_facade_refuses_a_tool_choice_naming_no_tool() -> None:
    with pytest.raises(BlogeUsageError, match="tool_choice 'ad' is not one of the agent's tools; "
                                              "did you mean 'add'"):
        Agent(ScriptedProvider("hi"), [add], tool_choice="ad")
