"""OpenAI Chat Completions translation: neutral requests out, wire responses in."""

from __future__ import annotations

from typing import Any

import pytest

from bloge.llm import ImagePart, LlmMessage, LlmRequest, TextPart, ToolCall, ToolDefinition
from bloge.llm.providers.openai import chat_request_body, parse_chat_response
from bloge.llm.providers.wire import WireFormatError
from tests.llm.providers.wire_payloads import WireCall, openai_completion

WEATHER = ToolDefinition(
    "get_weather", "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def request(*messages: LlmMessage, **options: Any) -> LlmRequest:
    return LlmRequest("gpt-4o", messages or (LlmMessage.user("Hi"),), **options)


def test_a_minimal_request_sends_only_model_and_messages() -> None:
    assert chat_request_body(request(), stream=False) == {
        "model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}


def test_every_role_maps_to_its_chat_message() -> None:
    call = ToolCall("call_abc", "get_weather", '{"city":"Paris"}')
    body = chat_request_body(request(
        LlmMessage.system("Be brief."),
        LlmMessage.user("Weather in Paris?"),
        LlmMessage.assistant("", [call]),
        LlmMessage.tool("call_abc", '{"temp":21}'),
        LlmMessage.assistant("21 °C."),
    ), stream=False)
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_abc", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_abc", "content": '{"temp":21}'},
        {"role": "assistant", "content": "21 °C."},
    ]


def test_assistant_text_next_to_tool_calls_is_kept() -> None:
    message = LlmMessage.assistant("Let me check.", [ToolCall("call_1", "get_weather", "")])
    [wire] = chat_request_body(request(message), stream=False)["messages"]
    assert wire["content"] == "Let me check."
    assert wire["tool_calls"][0]["function"]["arguments"] == "{}"


def test_multi_part_user_messages_become_content_parts() -> None:
    message = LlmMessage.user([TextPart("What is this?"),
                               ImagePart("https://example.com/cat.png"),
                               ImagePart("data:image/png;base64,iVBORw0K", "image/png")])
    [wire] = chat_request_body(request(message), stream=False)["messages"]
    assert wire == {"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
    ]}


def test_options_are_sent_under_their_wire_names() -> None:
    body = chat_request_body(request(
        temperature=0.2, max_tokens=256, stop=("END",), tools=(WEATHER,), tool_choice="auto",
        response_format={"type": "json_object"}), stream=False)
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 256
    assert body["stop"] == ["END"]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]
    assert body["tool_choice"] == "auto"
    assert body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(("choice", "wire"), [
    ("auto", "auto"), ("none", "none"), ("required", "required"),
    ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
])
def test_tool_choice_modes_and_tool_names(choice: str, wire: object) -> None:
    body = chat_request_body(request(tools=(WEATHER,), tool_choice=choice), stream=False)
    assert body["tool_choice"] == wire


def test_tools_without_a_tool_choice_travel_with_tool_choice_auto() -> None:
    # llama-cpp-python drops the tools of a request that has no tool_choice.
    assert chat_request_body(request(tools=(WEATHER,)), stream=False)["tool_choice"] == "auto"


def test_tool_calls_without_text_carry_empty_content_not_null() -> None:
    # llama-cpp-python answers HTTP 500 to "content": null on an assistant message.
    message = LlmMessage.assistant("", [ToolCall("call_1", "get_weather", '{"city":"Paris"}')])
    [wire] = chat_request_body(request(message), stream=False)["messages"]
    assert wire["content"] == ""


def test_the_seed_is_sent() -> None:
    assert chat_request_body(request(seed=7), stream=False)["seed"] == 7


def test_the_provider_max_tokens_applies_when_the_request_sets_none() -> None:
    assert chat_request_body(request(), stream=False, max_tokens=64)["max_tokens"] == 64
    body = chat_request_body(request(max_tokens=8), stream=False, max_tokens=64)
    assert body["max_tokens"] == 8


def test_tool_choice_without_tools_is_not_sent() -> None:
    assert "tool_choice" not in chat_request_body(request(tool_choice="auto"), stream=False)


def test_parallel_tool_calls_travels_with_the_tools_when_set() -> None:
    body = chat_request_body(request(tools=(WEATHER,), parallel_tool_calls=False), stream=False)
    assert body["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in chat_request_body(request(tools=(WEATHER,)), stream=False)
    assert "parallel_tool_calls" not in chat_request_body(request(parallel_tool_calls=False),
                                                          stream=False)


def test_a_streaming_body_asks_for_usage_in_the_last_chunk() -> None:
    body = chat_request_body(request(), stream=True)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_a_plain_answer_gives_content_finish_reason_and_usage() -> None:
    response = parse_chat_response(openai_completion("Hello!", prompt=19, completion=17))
    assert (response.content, response.finish_reason, response.tool_calls) == ("Hello!", "stop", ())
    assert (response.prompt_tokens, response.completion_tokens) == (19, 17)


def test_tool_calls_with_null_content_give_empty_text() -> None:
    body = openai_completion(None, calls=[WireCall("call_1", "get_weather", ('{"city":"Paris"}',))],
                             finish_reason="tool_calls")
    response = parse_chat_response(body)
    assert response.content == ""
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (ToolCall("call_1", "get_weather", '{"city":"Paris"}'),)


def test_parallel_tool_calls_keep_their_order() -> None:
    body = openai_completion(None, calls=[WireCall("call_1", "get_weather", ('{"city":"Paris"}',)),
                                          WireCall("call_2", "get_weather", ('{"city":"Rome"}',))],
                             finish_reason="tool_calls")
    assert [c.id for c in parse_chat_response(body).tool_calls] == ["call_1", "call_2"]


def test_a_tool_call_with_empty_arguments_gets_an_empty_object() -> None:
    body = openai_completion(None, calls=[WireCall("call_1", "list_tickets")],
                             finish_reason="tool_calls")
    assert parse_chat_response(body).tool_calls[0].arguments == "{}"


def test_a_tool_call_without_an_id_gets_one() -> None:
    body = openai_completion(None, calls=[WireCall("", "list_tickets")], finish_reason="tool_calls")
    assert parse_chat_response(body).tool_calls[0].id.startswith("call_")


def test_a_missing_finish_reason_is_inferred_from_the_tool_calls() -> None:
    body = openai_completion(None, calls=[WireCall("call_1", "list_tickets")])
    body["choices"][0]["finish_reason"] = None
    assert parse_chat_response(body).finish_reason == "tool_calls"


def test_tool_calls_with_finish_reason_stop_finish_with_tool_calls() -> None:
    # OpenAI with a forced tool_choice, and Ollama always, say "stop" next to tool calls.
    body = openai_completion(None, calls=[WireCall("call_1", "list_tickets")], finish_reason="stop")
    assert parse_chat_response(body).finish_reason == "tool_calls"


def test_other_finish_reasons_next_to_tool_calls_are_kept() -> None:
    body = openai_completion(None, calls=[WireCall("call_1", "a", ('{"x":',))],
                             finish_reason="length")
    assert parse_chat_response(body).finish_reason == "length"


def test_a_response_without_usage_counts_zero_tokens() -> None:
    body = openai_completion("Hi")
    del body["usage"]
    assert (parse_chat_response(body).prompt_tokens, parse_chat_response(body).completion_tokens) == (0, 0)


def test_a_refusal_is_the_content() -> None:
    body = openai_completion(None)
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    assert parse_chat_response(body).content == "I can't help with that."


def test_a_response_without_choices_is_a_wire_format_error() -> None:
    body = openai_completion("Hi")
    body["choices"] = []
    with pytest.raises(WireFormatError, match="no choices"):
        parse_chat_response(body)


def test_a_response_holding_an_error_instead_of_choices_says_what_the_server_said() -> None:
    body = {"error": {"message": "model overloaded", "code": 502}}
    with pytest.raises(WireFormatError, match=(
            r"^the response has no choices; it holds an error: model overloaded \(code: 502\)$")):
        parse_chat_response(body)
