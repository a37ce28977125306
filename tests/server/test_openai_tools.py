"""A request's own tools, without HTTP: ``tools``, ``tool_choice`` and ``parallel_tool_calls``
read and checked (a 400 naming the field), the tool results a client sends back, and a
completion that ends with the client's tool calls, whole and streamed as the ``openai`` SDK
reads them."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from bloge.agent import AgentCheckpoint, AgentUsage, PendingCall, RunPaused
from bloge.agent.runtime import PendingRound
from bloge.llm import LlmMessage, LlmResponse, ToolCall, ToolDefinition
from bloge.server import openai_wire as wire
from bloge.server.inputs import BadRequestError
from bloge.server.launch import RunFailure
from bloge.server.openai_rounds import paused_answer, usage_since
from bloge.server.openai_tools import check_own_names, tool_replies

USER = {"role": "user", "content": "Weather in Paris?"}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True}}
USAGE = AgentUsage(llm_calls=1, prompt_tokens=9, completion_tokens=4)


def request(**fields: Any) -> wire.ChatRequest:
    body = {"model": "helper", "messages": [USER], **fields}
    return wire.chat_request(wire.CompletionBody.model_validate(body))


def refusal(**fields: Any) -> BadRequestError:
    with pytest.raises(BadRequestError) as caught:
        request(**fields)
    return caught.value


def function(**fields: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", **fields}}


def test_a_function_tool_becomes_a_tool_definition_of_the_run() -> None:
    tools = request(tools=[WEATHER, function()]).tools
    assert tools.tools == (
        ToolDefinition("get_weather", "The weather in a city",
                       WEATHER["function"]["parameters"]),
        ToolDefinition("f", "", {"type": "object", "properties": {}}))
    assert tools.strict == frozenset({"get_weather"})
    assert (tools.choice, tools.parallel) == (None, None)


@pytest.mark.parametrize(("tool", "param"), [
    ("f", "tools[0]"),
    ({"type": "custom", "custom": {"name": "f"}}, "tools[0].type"),
    ({"type": "function"}, "tools[0].function"),
    (function(name="f g"), "tools[0].function.name"),
    (function(name="x" * 65), "tools[0].function.name"),
    (function(description=3), "tools[0].function.description"),
    (function(strict="yes"), "tools[0].function.strict"),
    (function(parameters=[]), "tools[0].function.parameters"),
    (function(parameters={"type": "string"}), "tools[0].function.parameters.type"),
    (function(parameters={"type": "object", "properties": []}),
     "tools[0].function.parameters.properties"),
    (function(parameters={"type": "object", "properties": {"a": 1}}),
     "tools[0].function.parameters.properties.a"),
    (function(parameters={"type": "object", "required": "a"}),
     "tools[0].function.parameters.required"),
])
def test_a_tool_that_is_not_a_function_tool_is_refused_naming_the_field(tool: object,
                                                                         param: str) -> None:
    assert refusal(tools=[tool]).param == param


def test_two_tools_of_one_name_are_refused_naming_both() -> None:
    refused = refusal(tools=[function(), function()])
    assert refused.param == "tools[1].function.name"
    assert "tools[0] and tools[1]" in refused.message


def test_more_tools_than_openai_takes_are_refused() -> None:
    tools = [function(name=f"f{i}") for i in range(129)]
    assert refusal(tools=tools).param == "tools"


@pytest.mark.parametrize(("parameters", "param"), [
    ({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
     "additionalProperties"),
    ({"type": "object", "properties": {"city": {"type": "string"}},
      "additionalProperties": False}, "required"),
    ({"type": "object", "additionalProperties": False, "required": ["at"], "properties": {
        "at": {"type": "object", "properties": {"lat": {"type": "number"}},
               "required": ["lat"]}}}, "properties.at.additionalProperties"),
    ({"type": "object", "additionalProperties": False, "required": ["places"], "properties": {
        "places": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}}, "additionalProperties": False}}}},
     "properties.places.items.required"),
    ({"type": "object", "additionalProperties": False, "required": ["p"], "properties": {
        "p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "object", "properties": {}}}},
     "$defs.P.additionalProperties"),
])
def test_a_strict_schema_must_close_and_require_every_object(parameters: dict[str, Any],
                                                             param: str) -> None:
    refused = refusal(tools=[function(parameters=parameters, strict=True)])
    assert refused.param == f"tools[0].function.parameters.{param}"
    assert "strict schema" in refused.message


def test_the_same_schema_without_strict_is_taken_as_it_is() -> None:
    loose = {"type": "object", "properties": {"city": {"type": "string"}}}
    assert request(tools=[function(parameters=loose)]).tools.tools[0].parameters == loose


@pytest.mark.parametrize(("choice", "read"), [
    ("none", "none"), ("auto", "auto"), ("required", "required"),
    ({"type": "function", "function": {"name": "get_weather"}}, "get_weather")])
def test_tool_choice_is_a_mode_or_one_of_the_requests_tools(choice: object, read: str) -> None:
    assert request(tools=[WEATHER], tool_choice=choice).tools.choice == read


@pytest.mark.parametrize(("choice", "param"), [
    ("always", "tool_choice"),
    (3, "tool_choice"),
    ({"type": "allowed_tools", "allowed_tools": {}}, "tool_choice"),
    ({"type": "function", "function": {"name": "get_time"}}, "tool_choice.function.name"),
])
def test_a_tool_choice_it_cannot_honour_is_refused_naming_the_field(choice: object,
                                                                    param: str) -> None:
    assert refusal(tools=[WEATHER], tool_choice=choice).param == param


def test_tool_choice_none_offers_the_model_none_of_the_clients_tools() -> None:
    assert request(tools=[WEATHER], tool_choice="none").tools.offered == ()
    assert request(tools=[WEATHER]).tools.offered == request(tools=[WEATHER]).tools.tools


def test_parallel_tool_calls_is_read_and_must_be_a_boolean() -> None:
    assert request(tools=[WEATHER], parallel_tool_calls=False).tools.parallel is False
    with pytest.raises(Exception, match="parallel_tool_calls"):
        request(tools=[WEATHER], parallel_tool_calls="no")


def test_a_client_tool_may_not_take_the_name_of_one_of_the_agents_own() -> None:
    tools = request(tools=[function(name="lookup")]).tools
    with pytest.raises(BadRequestError, match="of its own") as caught:
        check_own_names(tools, ("lookup",))
    assert caught.value.param == "tools[0].function.name"


def test_the_tool_messages_that_end_a_request_are_its_clients_results() -> None:
    messages = wire.agent_input([USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rain"}]},
    ]).messages
    replies = tool_replies(messages)
    assert replies is not None
    assert (dict(replies.results), replies.first) == ({"c1": "sunny", "c2": "rain"}, 2)
    assert tool_replies((*messages, LlmMessage.user("And Rome?"))) is None


def test_tool_results_carry_the_calls_they_answer_and_the_messages_their_run_started_with(
        ) -> None:
    def called(call_id: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": "Let me see.", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "sunny"}]
    history = [{"role": "system", "content": "Be brief."}, *called("c0"), USER]
    messages = wire.agent_input([*history, *called("c1"), *called("c2")]).messages
    replies = tool_replies(messages)
    assert replies is not None
    assert replies.calls == (ToolCall("c2", "get_weather", '{"city": "Paris"}'),)
    assert replies.started == messages[:len(history)]


CALLS = (ToolCall("call_1", "get_weather", '{"city": "Paris, the city of light"}'),
         ToolCall("call_2", "get_weather", '{"city": "Rome"}'))


def test_a_completion_waiting_on_the_clients_tools_carries_its_calls() -> None:
    said = wire.calling("", CALLS, USAGE)
    document = wire.completion("chatcmpl-r1", "helper", 1, said)
    parsed = ChatCompletion.model_validate(document)
    [choice] = parsed.choices
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", None)
    assert [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls
            or ()] == [(c.id, c.name, c.arguments) for c in CALLS]


def test_a_streamed_completion_streams_each_call_as_openai_does() -> None:
    writer = wire.ChunkWriter("chatcmpl-r1", "helper", 1, include_usage=True)
    texts = [writer.opening(), writer.token("Checking.", 1),
             *writer.ending(wire.calling("Checking.", CALLS, USAGE))]
    chunks = [json.loads(text) for text in texts]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    # Per call: index, id, type and name with empty arguments first, then the arguments.
    assert deltas[2] == {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                         "function": {"name": "get_weather", "arguments": ""}}]}
    assert deltas[3] == {"tool_calls": [{"index": 0, "function": {"arguments": CALLS[0]
                                                                  .arguments}}]}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    final = state.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Checking."
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()] == [
        (c.id, c.name, c.arguments) for c in CALLS]
    assert final.usage is not None
    assert final.usage.total_tokens == 13


def test_long_arguments_are_streamed_in_pieces() -> None:
    call = ToolCall("call_1", "f", json.dumps({"text": "x" * 150}))
    deltas = wire.tool_call_deltas((call,))
    pieces = [d["tool_calls"][0]["function"]["arguments"] for d in deltas[1:]]
    assert len(pieces) == 3
    assert "".join(pieces) == call.arguments


def paused(status: Literal["awaiting_approval", "awaiting_tool_results"],
           *calls: tuple[str, Literal["approval", "external"]]) -> RunPaused:
    """A run paused in a round of ``calls`` (call id, kind), the model having said
    "Checking."."""
    response = LlmResponse("Checking.", "tool_calls", tool_calls=tuple(
        ToolCall(call_id, "get_weather", '{"city": "Paris"}') for call_id, _ in calls))
    return RunPaused(run_id="r1", status=status,
                     pending=tuple(PendingCall(call_id, "get_weather", "{}", kind, "h", 0.0)
                                   for call_id, kind in calls),
                     checkpoint=AgentCheckpoint((), 1, {}, usage=USAGE),
                     tool_round=PendingRound(1, response, {}))


def test_a_run_paused_on_the_clients_tools_is_told_as_their_calls() -> None:
    said = paused_answer(paused("awaiting_tool_results", ("w1", "external")),
                         since=AgentUsage())
    assert isinstance(said, wire.Answer)
    assert (said.content, said.finish_reason, [c.id for c in said.tool_calls]) == (
        "Checking.", "tool_calls", ["w1"])
    assert said.usage == USAGE


def test_a_run_paused_for_a_persons_approval_alone_is_an_error_saying_where_to_decide(
        ) -> None:
    said = paused_answer(paused("awaiting_approval", ("a1", "approval")), since=AgentUsage())
    assert isinstance(said, RunFailure)
    assert (said.status, said.code) == (409, "awaiting_approval")
    assert "tool call(s) 'a1': decide each with POST /runs/r1/approvals/{call_id}" in (
        said.message)


def test_a_run_paused_also_for_an_approval_tells_the_clients_calls_all_the_same() -> None:
    said = paused_answer(paused("awaiting_approval", ("a1", "approval"), ("w1", "external")),
                         since=AgentUsage())
    assert isinstance(said, wire.Answer)
    assert (said.finish_reason, [c.id for c in said.tool_calls]) == ("tool_calls", ["w1"])


def test_a_continued_completion_tells_the_usage_of_its_own_model_calls() -> None:
    before = AgentUsage(llm_calls=1, prompt_tokens=5, completion_tokens=1)
    assert usage_since(USAGE, before) == AgentUsage(llm_calls=0, prompt_tokens=4,
                                                    completion_tokens=3)
