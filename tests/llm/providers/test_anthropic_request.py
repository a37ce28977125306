"""build_messages_request: the pure request builder, and how it makes any memory view a
conversation the Messages API accepts."""

from __future__ import annotations

import pytest

from bloge.llm import ImagePart, LlmMessage, LlmRequest, TextPart, ToolCall, ToolDefinition
from bloge.llm.providers import build_messages_request
from bloge.llm.providers.anthropic import messages_request_for
from bloge.llm.providers.anthropic_messages import CONTINUATION, MISSING_RESULT

WEATHER = ToolDefinition(
    "get_weather", "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
PARIS = ToolCall("toolu_01", "get_weather", '{"city": "Paris"}')
ROME = ToolCall("toolu_02", "get_weather", '{"city": "Rome"}')


def messages_of(*messages: LlmMessage) -> list[dict]:
    return build_messages_request("claude-opus-4-8", 1024, "", messages, ())["messages"]


def test_a_minimal_request_has_model_max_tokens_and_messages() -> None:
    assert build_messages_request("claude-opus-4-8", 1024, "", [LlmMessage.user("Hi")], []) == {
        "model": "claude-opus-4-8", "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hi"}]}


def test_the_system_argument_and_system_messages_become_the_top_level_system() -> None:
    body = build_messages_request(
        "m", 10, "You are terse.",
        [LlmMessage.system("Answer in French."), LlmMessage.user("Hi")], [])
    assert body["system"] == "You are terse.\n\nAnswer in French."
    assert body["messages"] == [{"role": "user", "content": "Hi"}]


def test_tools_carry_their_json_schema_as_input_schema() -> None:
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [WEATHER])
    assert body["tools"] == [{
        "name": "get_weather", "description": "Current weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}]


def test_a_schema_without_a_type_is_an_object_schema() -> None:
    tool = ToolDefinition("ping", parameters={"properties": {}})
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [tool])
    assert body["tools"] == [{"name": "ping", "input_schema": {"type": "object", "properties": {}}}]


@pytest.mark.parametrize(("choice", "wire"), [
    ("auto", {"type": "auto"}), ("none", {"type": "none"}), ("required", {"type": "any"}),
    ("get_weather", {"type": "tool", "name": "get_weather"}),
])
def test_tool_choice_modes_and_tool_names(choice: str, wire: dict) -> None:
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [WEATHER],
                                  tool_choice=choice)
    assert body["tool_choice"] == wire


def test_tool_choice_without_tools_is_not_sent() -> None:
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [], tool_choice="auto")
    assert "tool_choice" not in body


@pytest.mark.parametrize(("choice", "wire"), [
    (None, {"type": "auto", "disable_parallel_tool_use": True}),
    ("required", {"type": "any", "disable_parallel_tool_use": True}),
    ("get_weather", {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}),
    ("none", {"type": "none"}),
])
def test_no_parallel_tool_calls_disables_parallel_tool_use(choice: str | None,
                                                          wire: dict) -> None:
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [WEATHER],
                                  tool_choice=choice, parallel_tool_calls=False)
    assert body["tool_choice"] == wire


def test_temperature_and_stop_sequences_are_sent_when_set() -> None:
    body = build_messages_request("m", 10, "", [LlmMessage.user("Hi")], [], temperature=0.3,
                                  stop=["END"])
    assert (body["temperature"], body["stop_sequences"]) == (0.3, ["END"])


def test_an_assistant_turn_with_tool_calls_becomes_text_and_tool_use_blocks() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("Checking.", [PARIS]),
                       LlmMessage.tool("toolu_01", "21 °C"))
    assert wire[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]}


def test_all_tool_results_of_a_turn_form_one_user_message() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("", [PARIS, ROME]),
                       LlmMessage.tool("toolu_01", "21 °C"),
                       LlmMessage.tool("toolu_02", "city unknown", is_error=True))
    assert wire[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "21 °C"},
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "city unknown",
         "is_error": True}]}


def test_tool_results_follow_the_order_of_the_calls() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("", [PARIS, ROME]),
                       LlmMessage.tool("toolu_02", "18 °C"), LlmMessage.tool("toolu_01", "21 °C"))
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["toolu_01", "toolu_02"]


def test_a_user_message_after_tool_results_joins_them_after_the_results() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("", [PARIS]),
                       LlmMessage.tool("toolu_01", "21 °C"), LlmMessage.user("And tomorrow?"))
    assert wire[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "21 °C"},
        {"type": "text", "text": "And tomorrow?"}]


def test_a_missing_tool_result_becomes_an_error_result() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("", [PARIS, ROME]),
                       LlmMessage.tool("toolu_02", "18 °C"))
    assert wire[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_01",
                                     "content": MISSING_RESULT, "is_error": True}


def test_a_conversation_ending_in_tool_calls_gets_error_results() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.assistant("", [PARIS]))
    assert wire[-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": MISSING_RESULT,
         "is_error": True}]}


def test_a_tool_result_whose_call_was_pruned_becomes_text() -> None:
    wire = messages_of(LlmMessage.user("Weather?"), LlmMessage.tool("toolu_09", "21 °C"))
    assert wire == [{"role": "user", "content": [
        {"type": "text", "text": "Weather?"},
        {"type": "text", "text": "[result of tool call toolu_09]: 21 °C"}]}]


def test_a_view_starting_with_the_assistant_starts_with_a_user_continuation() -> None:
    wire = messages_of(LlmMessage.assistant("Earlier answer."), LlmMessage.user("Thanks!"))
    assert wire == [{"role": "user", "content": CONTINUATION},
                    {"role": "assistant", "content": "Earlier answer."},
                    {"role": "user", "content": "Thanks!"}]


def test_an_empty_view_is_a_user_continuation() -> None:
    assert messages_of() == [{"role": "user", "content": CONTINUATION}]


def test_neighbours_of_the_same_role_merge_into_one_message() -> None:
    wire = messages_of(LlmMessage.user("Hi"), LlmMessage.user("Anyone?"),
                       LlmMessage.assistant("Yes."), LlmMessage.assistant("Hello."))
    assert wire == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"},
                                     {"type": "text", "text": "Anyone?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Yes."},
                                          {"type": "text", "text": "Hello."}]}]


def test_empty_messages_disappear() -> None:
    wire = messages_of(LlmMessage.user("Hi"), LlmMessage.assistant("  "), LlmMessage.user(""),
                       LlmMessage.user("Still there?"))
    assert wire == [{"role": "user", "content": [{"type": "text", "text": "Hi"},
                                                 {"type": "text", "text": "Still there?"}]}]


def test_a_final_assistant_prefill_loses_its_trailing_whitespace() -> None:
    wire = messages_of(LlmMessage.user("Name a colour."), LlmMessage.assistant("The colour is \n"))
    assert wire[-1] == {"role": "assistant", "content": "The colour is"}


@pytest.mark.parametrize("arguments", ["{broken", '{"amount": NaN}', '{"n": -Infinity}'])
def test_arguments_that_are_not_a_json_object_become_an_empty_input(arguments: str) -> None:
    wire = messages_of(LlmMessage.user("Hi"),
                       LlmMessage.assistant("", [ToolCall("toolu_1", "a", arguments)]),
                       LlmMessage.tool("toolu_1", "invalid arguments", is_error=True))
    assert wire[1]["content"][0]["input"] == {}


def test_images_become_url_or_base64_image_blocks() -> None:
    wire = messages_of(LlmMessage.user([
        TextPart("What is this?"), ImagePart("https://example.com/cat.png"),
        ImagePart("data:image/jpeg;base64,/9j/4AAQ")]))
    assert wire[0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                     "data": "/9j/4AAQ"}}]


def test_an_empty_tool_result_has_no_content() -> None:
    wire = messages_of(LlmMessage.user("Go"), LlmMessage.assistant("", [PARIS]),
                       LlmMessage.tool("toolu_01", ""))
    assert wire[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_01"}]


def test_an_agents_max_tokens_tool_choice_and_stop_reach_the_wire_but_no_seed() -> None:
    request = LlmRequest("claude", (LlmMessage.user("Hi"),), max_tokens=64, stop=("END",),
                         tools=(WEATHER,), tool_choice="get_weather", seed=7)
    body = messages_request_for(request, model="claude", max_tokens=1024)
    assert (body["max_tokens"], body["stop_sequences"]) == (64, ["END"])
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert "seed" not in body
