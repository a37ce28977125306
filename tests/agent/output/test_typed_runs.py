"""Typed results: declared in the DSL or as a Python type, validated, repaired with located
problems within max_turns, streamed as Partial chunks, asked for per provider mode."""

from __future__ import annotations

import json
import sys
import typing
from typing import Any

import httpx
import pytest
import typing_extensions
from pydantic import BaseModel

from bloge import Agent, AgentDslCompiler, BlogeUsageError, DslError, ProviderError
from bloge.agent import Done, OutputValidationError, Partial
from bloge.llm import (
    LlmMessage,
    LlmRequest,
    ScriptedProvider,
    ToolDefinition,
    tool_call_response,
)
from bloge.llm.offline import OfflineProvider
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from bloge.llm.structured import OUTPUT_TOOL, OutputRequest

TYPED = """agent triage {
  model = "m"
  output { title: string, priority: "low" | "normal" | "high", tags: list<string>? }
}"""


class Ticket(BaseModel):
    title: str
    priority: int


def test_dsl_fields_compile_to_a_strict_object_schema() -> None:
    schema = AgentDslCompiler().compile(TYPED).output
    assert schema is not None
    assert schema.schema == {
        "type": "object", "additionalProperties": False,
        "required": ["title", "priority", "tags"],
        "properties": {"title": {"type": "string"},
                       "priority": {"enum": ["low", "normal", "high"]},
                       "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                          {"type": "null"}]}}}


def test_schema_mistakes_are_compile_errors_at_their_line_and_column() -> None:
    source = 'agent a {\n  model = "m"\n  output { title: strng, n: list<int, int> }\n}'
    with pytest.raises(DslError) as caught:
        AgentDslCompiler().compile(source, filename="a.bloge")
    message = str(caught.value)
    assert "a.bloge:3:19: unknown type 'strng'; did you mean 'string'?" in message
    assert "a.bloge:3:29: list takes one item type" in message


def test_output_names_a_registered_type() -> None:
    definition = AgentDslCompiler(output_types={"Ticket": Ticket}).compile(
        'agent a { model = "m"  output = Ticket }')
    assert definition.output is not None
    assert definition.output.python_type is Ticket


def test_an_unregistered_type_is_a_located_error() -> None:
    with pytest.raises(DslError, match=r"a.bloge:1:33: output type 'Tiket' is not registered; "
                                       r"did you mean 'Ticket'\?"):
        AgentDslCompiler(output_types={"Ticket": Ticket}).compile(
            'agent a { model = "m"  output = Tiket }', filename="a.bloge")


def test_the_output_is_the_registered_types_instance() -> None:
    output = Agent(ScriptedProvider('{"title": "Jam", "priority": 2}'), model="m",
                   output_type=Ticket).run_output("file it")
    assert output.output == Ticket(title="Jam", priority=2)
    assert output.to_dict(messages=False, checkpoint=False)["output"] == {
        "title": "Jam", "priority": 2}


def test_an_invalid_answer_goes_back_with_located_problems_and_costs_a_turn() -> None:
    provider = ScriptedProvider('{"title": 5}', '{"title": "Jam", "priority": 2}')
    output = Agent(provider, model="m", output_type=Ticket).run_output("file it")
    assert output.turns_used == 2
    repair = provider.requests[1].messages[-1]
    assert repair.role == "user"
    assert "$.title: expected a valid string, got 5" in repair.content
    assert "$.priority: expected a value (required), got nothing" in repair.content


def test_repairs_are_bounded_and_the_run_fails_with_the_problems() -> None:
    provider = ScriptedProvider("no", "no", "no")
    with pytest.raises(OutputValidationError) as caught:
        Agent(provider, model="m", output_type=Ticket).run_output("file it")
    assert caught.value.repairs == 2
    assert caught.value.problems[0].path == "$"
    assert len(provider.requests) == 3


def test_a_run_resumed_after_its_repairs_ran_out_is_sent_the_problems_again() -> None:
    provider = ScriptedProvider("no", "no", "no", '{"title": "Jam", "priority": 2}')
    agent = Agent(provider, model="m", output_type=Ticket)
    with pytest.raises(OutputValidationError) as caught:
        agent.run_output("file it")
    output = agent.resume(caught.value.checkpoint)
    assert output.output == Ticket(title="Jam", priority=2)
    sent = provider.requests[3].messages
    assert [message.role for message in sent[-2:]] == ["assistant", "user"]
    assert sent[-1].content.startswith("Your answer does not match the required output schema")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_an_answer_holding_a_number_json_lacks_is_not_json_and_goes_back(number: str) -> None:
    schema = AgentDslCompiler().compile(
        'agent a {\n  model = "m"\n  output { f: float }\n}').output
    assert schema is not None
    value, problems = schema.parse(f'{{"f": {number}}}')
    assert value is None
    assert [str(p) for p in problems] == [
        f"$: expected a JSON value, got text that is not JSON ({number} is not a JSON number)"]


def test_a_streamed_partial_leaves_out_a_number_json_lacks() -> None:
    agent = Agent(ScriptedProvider('{"title": "Jam", "priority": NaN}',
                                   '{"title": "Jam", "priority": 2}'),
                  model="m", output_type=Ticket)
    chunks = list(agent.stream("file it"))
    assert all(c.value.get("priority") in (None, 2) for c in chunks if isinstance(c, Partial))


def test_a_dsl_agent_checks_literal_unions() -> None:
    schema = AgentDslCompiler().compile(TYPED).output
    assert schema is not None
    value, problems = schema.parse('{"title": "x", "priority": "urgent", "tags": null}')
    assert value is None
    assert [str(p) for p in problems] == [
        '$.priority: expected one of "low", "normal", "high", got "urgent"']


def test_streaming_yields_partials_then_the_typed_value() -> None:
    agent = Agent(ScriptedProvider('{"title": "Printer jam", "priority": 3}'), model="m",
                  output_type=Ticket)
    chunks = list(agent.stream("file it"))
    partials = [c.value for c in chunks if isinstance(c, Partial)]
    assert partials[-1] == {"title": "Printer jam", "priority": 3}
    assert any(p.get("title", "").startswith("Printer") and "priority" not in p
               for p in partials)
    done = chunks[-1]
    assert isinstance(done, Done)
    assert done.final_output.output == Ticket(title="Printer jam",
                                                                         priority=3)


def test_the_offline_model_answers_a_typed_request_with_a_value_that_validates() -> None:
    definition = AgentDslCompiler().compile(TYPED)
    assert definition.output is not None
    request = LlmRequest("m", (LlmMessage.user("the printer is broken, high priority"),),
                         output=definition.output.request())
    answer = OfflineProvider().respond(request)
    value, problems = definition.output.parse(answer.content)
    assert problems == []
    assert value["priority"] == "high"


def test_the_offline_model_fills_fields_from_tool_results() -> None:
    output = OutputRequest("t", {"type": "object", "properties": {"city": {"type": "string"},
                                                                  "temp": {"type": "integer"}},
                                 "required": ["city", "temp"], "additionalProperties": False})
    messages = (LlmMessage.user("weather?"),
                LlmMessage.assistant("", ()),
                LlmMessage("tool", '{"city": "Oslo", "temp": 4}', tool_call_id="c1"))
    answer = OfflineProvider().respond(LlmRequest("m", messages, output=output))
    assert json.loads(answer.content) == {"city": "Oslo", "temp": 4}


# ------------------------------------------------------------------ wire formats per provider

OUTPUT = OutputRequest("Ticket", {"type": "object", "properties": {"title": {"type": "string"}},
                                  "required": ["title"], "additionalProperties": False})


def _openai(bodies: list[dict[str, Any]], answer: dict[str, Any], **kwargs: Any
            ) -> OpenAIChatProvider:
    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=answer)

    return OpenAIChatProvider(base_url="https://api.openai.test/v1", api_key="k",
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handle)),
                              **kwargs)


# Recorded shape of a Chat Completions answer to a json_schema response_format.
OPENAI_JSON = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
               "choices": [{"index": 0, "finish_reason": "stop", "message": {
                   "role": "assistant", "content": '{"title":"Jam"}', "refusal": None}}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
# ... and to a forced function (tool mode): finish_reason "stop", the call in tool_calls.
OPENAI_TOOL = {"id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o",
               "choices": [{"index": 0, "finish_reason": "stop", "message": {
                   "role": "assistant", "content": None, "tool_calls": [{
                       "id": "call_1", "type": "function", "function": {
                           "name": OUTPUT_TOOL, "arguments": '{"title":"Jam"}'}}]}}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


async def test_openai_is_asked_with_a_strict_json_schema_response_format() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _openai(bodies, OPENAI_JSON)
    answer = await provider.chat(LlmRequest("gpt-4o", (LlmMessage.user("x"),), output=OUTPUT))
    assert bodies[0]["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Ticket", "schema": dict(OUTPUT.schema), "strict": True}}
    assert answer.content == '{"title":"Jam"}'


async def test_openai_in_tool_mode_forces_the_final_answer_tool_and_reads_its_arguments() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _openai(bodies, OPENAI_TOOL, output_mode="tool")
    answer = await provider.chat(LlmRequest("gpt-4o", (LlmMessage.user("x"),), output=OUTPUT))
    assert "response_format" not in bodies[0]
    assert bodies[0]["tool_choice"] == {"type": "function", "function": {"name": OUTPUT_TOOL}}
    assert bodies[0]["tools"][0]["function"]["parameters"] == dict(OUTPUT.schema)
    assert (answer.content, answer.tool_calls) == ('{"title":"Jam"}', ())


async def test_openai_in_prompted_mode_puts_the_schema_in_a_system_message() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _openai(bodies, OPENAI_JSON, output_mode="prompted")
    await provider.chat(LlmRequest("gpt-4o", (LlmMessage.user("x"),), output=OUTPUT))
    last = bodies[0]["messages"][-1]
    assert last["role"] == "system"
    assert '"title"' in last["content"]
    assert "response_format" not in bodies[0]
    assert "tools" not in bodies[0]


# Recorded shape of a Messages API answer with a forced tool.
ANTHROPIC_TOOL = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                  "content": [{"type": "tool_use", "id": "toolu_1", "name": OUTPUT_TOOL,
                               "input": {"title": "Jam"}}],
                  "stop_reason": "tool_use", "stop_sequence": None,
                  "usage": {"input_tokens": 10, "output_tokens": 5}}


async def test_anthropic_is_asked_with_a_forced_tool() -> None:
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=ANTHROPIC_TOOL)

    provider = AnthropicProvider(api_key="k", http_client=httpx.AsyncClient(
        transport=httpx.MockTransport(handle)))
    answer = await provider.chat(LlmRequest("claude-x", (LlmMessage.user("x"),), output=OUTPUT))
    assert bodies[0]["tool_choice"] == {"type": "tool", "name": OUTPUT_TOOL}
    assert bodies[0]["tools"][0]["input_schema"]["properties"] == {"title": {"type": "string"}}
    assert json.loads(answer.content) == {"title": "Jam"}
    assert answer.tool_calls == ()
    assert answer.finish_reason == "stop"


async def test_with_other_tools_anthropic_must_call_some_tool() -> None:
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=ANTHROPIC_TOOL)

    provider = AnthropicProvider(api_key="k", http_client=httpx.AsyncClient(
        transport=httpx.MockTransport(handle)))
    await provider.chat(LlmRequest("claude-x", (LlmMessage.user("x"),),
                                   tools=(ToolDefinition("lookup"),), output=OUTPUT))
    assert bodies[0]["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in bodies[0]["tools"]] == ["lookup", OUTPUT_TOOL]


# A server without structured output (an older llama.cpp, say) refuses the response_format.
REFUSAL = {"error": {"code": 400, "type": "invalid_request_error",
                     "message": "response_format type json_schema is not supported"}}


def _refusing(bodies: list[dict[str, Any]], answer: Any) -> OpenAIChatProvider:
    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if "response_format" in body:
            return httpx.Response(400, json=REFUSAL)
        if body.get("stream"):
            return httpx.Response(200, content=answer,
                                  headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=answer)

    return OpenAIChatProvider(base_url="https://llm.test/v1", api_key="k",
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handle)))


async def test_in_auto_mode_a_server_refusing_response_format_is_asked_with_the_tool() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _refusing(bodies, OPENAI_TOOL)
    request = LlmRequest("m", (LlmMessage.user("x"),), output=OUTPUT)
    answer = await provider.chat(request)
    assert json.loads(answer.content) == {"title": "Jam"}
    await provider.chat(request)
    # refused once; the next request goes straight to the tool
    assert ["response_format" in b for b in bodies] == [True, False, False]


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + \
        b"data: [DONE]\n\n"


# Recorded shape of a streamed forced-function answer: the arguments come in pieces.
OPENAI_TOOL_STREAM = _sse(
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": {"name": OUTPUT_TOOL, "arguments": ""}}]}, "finish_reason": None}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
            "arguments": '{"title":'}}]}, "finish_reason": None}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
            "arguments": '"Jam"}'}}]}, "finish_reason": None}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
        "index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
     "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}},
)


async def test_a_streamed_run_falls_back_too_and_the_final_call_streams_as_text() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _refusing(bodies, OPENAI_TOOL_STREAM)
    stream = provider.stream_chat(LlmRequest("m", (LlmMessage.user("x"),), output=OUTPUT))
    chunks = [chunk async for chunk in stream]
    assert "".join(c.content for c in chunks) == '{"title":"Jam"}'
    assert all(c.tool_call is None for c in chunks)
    assert chunks[-1].done
    assert chunks[-1].finish_reason == "stop"
    assert bodies[1]["tool_choice"] == {"type": "function", "function": {"name": OUTPUT_TOOL}}


async def test_a_forced_mode_is_never_changed_behind_the_users_back() -> None:
    bodies: list[dict[str, Any]] = []
    provider = _refusing(bodies, OPENAI_TOOL)
    forced = OutputRequest(OUTPUT.name, OUTPUT.schema, mode="native")
    with pytest.raises(ProviderError, match="json_schema is not supported"):
        await provider.chat(LlmRequest("m", (LlmMessage.user("x"),), output=forced))


def test_an_answer_cut_off_by_the_token_limit_is_told_so() -> None:
    from bloge.llm import LlmResponse  # noqa: PLC0415 -- only this test builds a response

    provider = ScriptedProvider(LlmResponse('{"title": "Pri', finish_reason="length"),
                                '{"title": "Printer", "priority": 1}')
    Agent(provider, model="m", output_type=Ticket).run_output("file it")
    assert ("- $: expected a complete answer, got one cut off at the max_tokens limit"
            in provider.requests[1].messages[-1].content)


def test_tools_and_a_typed_result_work_together() -> None:
    def lookup(q: str) -> dict[str, Any]:
        return {"found": q.upper()}

    provider = ScriptedProvider(tool_call_response("lookup", '{"q": "jam"}'),
                                '{"title": "JAM", "priority": 1}')
    output = Agent(provider, [lookup], model="m", output_type=Ticket).run_output("file it")
    assert output.output == Ticket(title="JAM", priority=1)
    assert output.turns_used == 2
    # every model call of the run carries the output request alongside the tools
    assert all(r.output is not None and r.tools for r in provider.requests)


def test_a_clients_schema_with_local_refs_is_checked_through_them() -> None:
    from bloge.agent import OutputSchema  # noqa: PLC0415 -- only this test builds one by hand

    schema = OutputSchema.from_json_schema("order", {
        "type": "object", "required": ["item"], "properties": {"item": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": {"type": "object", "required": ["sku"],
                           "properties": {"sku": {"type": "string"}}}}})
    _, problems = schema.parse('{"item": {"sku": 7}}')
    assert [str(p) for p in problems] == ["$.item.sku: expected a string, got 7"]


def test_an_optional_field_may_be_left_out() -> None:
    schema = AgentDslCompiler().compile(TYPED).output
    assert schema is not None
    value, problems = schema.parse('{"title": "x", "priority": "low"}')
    assert problems == []
    assert value == {"title": "x", "priority": "low"}


def test_a_nested_registered_type_is_strict_ready_and_validates() -> None:
    from bloge.agent import OutputSchema  # noqa: PLC0415 -- only this test builds one by hand

    class Item(BaseModel):
        sku: str
        note: str = "none"

    class Order(BaseModel):
        items: list[Item]

    schema = OutputSchema.of(Order)
    item = schema.schema["$defs"]["Item"]
    assert item["required"] == ["sku", "note"]
    assert item["additionalProperties"] is False
    value, problems = schema.parse('{"items": [{"sku": "a", "note": null}]}')
    assert problems == []
    assert value == Order(items=[Item(sku="a")])


def _anthropic_sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


# Recorded shape of a streamed forced tool_use: the input arrives as input_json_delta pieces.
ANTHROPIC_TOOL_STREAM = _anthropic_sse(
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                          "model": "claude-x", "content": [],
                                          "stop_reason": None, "stop_sequence": None,
                                          "usage": {"input_tokens": 10, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "toolu_1", "name": OUTPUT_TOOL, "input": {}}},
    {"type": "content_block_delta", "index": 0, "delta": {
        "type": "input_json_delta", "partial_json": '{"title": '}},
    {"type": "content_block_delta", "index": 0, "delta": {
        "type": "input_json_delta", "partial_json": '"Jam"}'}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 12}},
    {"type": "message_stop"},
)


async def test_anthropic_streams_the_forced_tools_input_as_the_answer() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=ANTHROPIC_TOOL_STREAM,
                              headers={"content-type": "text/event-stream"})

    provider = AnthropicProvider(api_key="k", http_client=httpx.AsyncClient(
        transport=httpx.MockTransport(handle)))
    stream = provider.stream_chat(LlmRequest("claude-x", (LlmMessage.user("x"),),
                                             output=OUTPUT))
    chunks = [chunk async for chunk in stream]
    assert json.loads("".join(c.content for c in chunks)) == {"title": "Jam"}
    assert all(c.tool_call is None for c in chunks)
    assert chunks[-1].finish_reason == "stop"


def test_from_dsl_names_an_output_type_by_its_class_name() -> None:
    agent = Agent.from_dsl('agent a {\n  model = "m"\n  output = Ticket\n}',
                           llm=ScriptedProvider('{"title": "Jam", "priority": 1}'),
                           output_types=[Ticket])
    assert agent.run_output("file it").output == Ticket(title="Jam", priority=1)


def test_the_offline_model_types_an_answer_from_its_tool_results() -> None:
    class Weather(BaseModel):
        city: str
        temperature: int

    def get_weather(city: str) -> dict[str, Any]:
        """Current weather of a city"""
        return {"city": "Paris", "temperature": 21}

    output = Agent(OfflineProvider(), [get_weather], model="m",
                   output_type=Weather).run_output("What is the weather in Paris?")
    assert output.output == Weather(city="Paris", temperature=21)
    assert output.turns_used == 2


@pytest.mark.parametrize("output_type", [int, list[str]])
def test_an_output_type_that_is_not_an_object_is_refused(output_type: object) -> None:
    with pytest.raises(BlogeUsageError, match="an output type is an object"):
        Agent(ScriptedProvider("1"), model="m", output_type=output_type)


def test_a_typed_dict_of_typing_extensions_is_an_output_type() -> None:
    class Draft(typing_extensions.TypedDict):
        title: str
        priority: typing_extensions.NotRequired[int]

    output = Agent(ScriptedProvider('{"title": "Jam", "priority": null}'), model="m",
                   output_type=Draft).run_output("file it")
    assert output.output == {"title": "Jam"}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads it from Python 3.12")
def test_a_typing_typed_dict_before_python_3_12_is_refused_saying_which_to_use() -> None:
    class Draft(typing.TypedDict):
        title: str

    with pytest.raises(BlogeUsageError, match=r"cannot use <class '.*Draft'> as an output "
                       r"type: Please use `typing_extensions.TypedDict` instead of "
                       r"`typing.TypedDict` on Python < 3.12.$"):
        Agent(ScriptedProvider("{}"), model="m", output_type=Draft)
