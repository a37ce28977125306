"""The Chat Completions translations, without HTTP: requests → runs, answers → completions,
tokens → chunks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bloge.agent import AgentCheckpoint, AgentOutput, AgentUsage, MaxTurnsExceededError
from bloge.llm import ImagePart, LlmMessage, TextPart, ToolCall
from bloge.server import openai_wire as wire
from bloge.server.inputs import BadRequestError

USER = {"role": "user", "content": "Hi"}
USAGE = AgentUsage(llm_calls=2, prompt_tokens=7, completion_tokens=5)


def request(**fields: Any) -> wire.ChatRequest:
    body = {"model": "helper", "messages": [USER], **fields}
    return wire.chat_request(wire.CompletionBody.model_validate(body))


def refused_param(**fields: Any) -> str | None:
    with pytest.raises(BadRequestError) as caught:
        request(**fields)
    return caught.value.param


def output(content: str = "Done.", *, finish_reason: str = "stop",
           exit_reason: str = "stop") -> AgentOutput:
    return AgentOutput(content, finish_reason, 1, (), {}, AgentCheckpoint((), 1, {}),
                       exit_reason=exit_reason, usage=USAGE, run_id="r1")


def test_a_request_names_the_agent_and_its_messages_are_the_input() -> None:
    chat = request(stream=True, stream_options={"include_usage": True})
    assert (chat.agent_id, chat.stream, chat.include_usage) == ("helper", True, True)
    assert chat.input.messages == (LlmMessage.user("Hi"),)


def test_fields_the_agent_owns_and_unknown_fields_are_accepted() -> None:
    chat = request(temperature=0.2, max_tokens=50, max_completion_tokens=50, top_p=0.9,
                   user="u1", n=1, tool_choice="auto", response_format={"type": "text"},
                   reasoning_effort="low", some_future_field={"x": 1})
    assert chat.input.messages == (LlmMessage.user("Hi"),)


@pytest.mark.parametrize(("fields", "param"), [
    ({"n": 2}, "n"),
    ({"functions": [{"name": "f"}]}, "functions"),
    ({"tool_choice": "required"}, "tool_choice"),  # with no tools to call
    ({"tool_choice": {"type": "function", "function": {"name": "f"}}},
     "tool_choice.function.name"),
    ({"response_format": {"type": "xml"}}, "response_format"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
     "response_format"),
    ({"stop": ""}, "stop"),
    ({"max_tokens": 10, "max_completion_tokens": 20}, "max_tokens"),
    ({"logprobs": True}, "logprobs"),
    ({"stream_options": {"include_usage": True}}, "stream_options"),
])
def test_what_cannot_be_honoured_is_refused_naming_the_field(fields: dict[str, Any],
                                                             param: str) -> None:
    assert refused_param(**fields) == param


def test_how_the_model_answers_becomes_the_runs_sampling() -> None:
    chat = request(temperature=0.3, max_completion_tokens=40, stop="END", seed=7, top_p=0.9)
    assert chat.sampling == {"temperature": 0.3, "max_tokens": 40, "stop": ("END",), "seed": 7}
    assert request(max_tokens=12, stop=["a", "b"]).sampling == {"max_tokens": 12,
                                                                "stop": ("a", "b")}
    assert request().sampling == {}


def test_the_older_functions_are_refused_saying_to_send_tools() -> None:
    with pytest.raises(BadRequestError, match='send them as "tools"'):
        request(functions=[{"name": "f"}])


def test_every_role_becomes_its_message() -> None:
    messages = wire.agent_input([
        {"role": "system", "content": "Be kind."},
        {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Find "},
                                     {"type": "text", "text": "kb"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "lookup", "arguments": '{"q": "kb"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"found": "KB"}'},
        {"role": "assistant", "content": "KB."},
    ]).messages
    assert messages == (
        LlmMessage.system("Be kind."), LlmMessage.system("Be brief."),
        LlmMessage.user("Find kb"),
        LlmMessage.assistant("", [ToolCall("c1", "lookup", '{"q": "kb"}')]),
        LlmMessage.tool("c1", '{"found": "KB"}'), LlmMessage.assistant("KB."))


def test_an_image_part_is_passed_on_by_its_url() -> None:
    (message,) = wire.agent_input([{"role": "user", "content": [
        {"type": "text", "text": "What is it?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]).messages
    assert message.parts == (TextPart("What is it?"), ImagePart("https://example.com/a.png"))


@pytest.mark.parametrize(("message", "param"), [
    ({"role": "function", "content": "x"}, "messages[1].role"),
    ({"role": "user", "content": 3}, "messages[1].content"),
    ({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "audio"}]},
     "messages[1].content[1]"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc"}}]},
     "messages[1].content[0].image_url.url"),
    ({"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://x"}}]},
     "messages[1].content[0]"),
    ({"role": "tool", "content": "x"}, "messages[1].tool_call_id"),
    ({"role": "assistant", "tool_calls": [{"id": "c1"}]}, "messages[1].tool_calls[0]"),
])
def test_a_bad_message_is_refused_naming_where(message: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        wire.agent_input([USER, message])
    assert caught.value.param == param


@pytest.mark.parametrize(("role", "allowed"), [
    ("user", "a list of text and image_url parts"),  # before: "a list of text parts"
    ("system", "a list of text parts")])
def test_content_of_the_wrong_kind_is_told_the_parts_its_role_may_have(role: str,
                                                                       allowed: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        wire.agent_input([{"role": role, "content": None}])
    assert caught.value.message == f"messages[0].content: the content must be a string or {allowed}"


@pytest.mark.parametrize(("finish_reason", "exit_reason", "expected"), [
    ("stop", "stop", "stop"), ("stop", "exit_condition", "stop"),
    ("tool_calls", "exit_condition", "stop"), ("length", "stop", "length")])
def test_a_finished_run_stops_unless_its_last_answer_was_cut_short(
        finish_reason: str, exit_reason: str, expected: str) -> None:
    said = wire.answer(output(finish_reason=finish_reason, exit_reason=exit_reason))
    assert said.finish_reason == expected


def test_a_run_out_of_turns_finishes_with_length_and_what_the_model_said_last() -> None:
    conversation = (LlmMessage.user("Loop"), LlmMessage.assistant("Looking…"),
                    LlmMessage.assistant("", [ToolCall("c1", "lookup")]),
                    LlmMessage.tool("c1", "{}"))
    error = MaxTurnsExceededError(agent_id="helper", max_turns=2, checkpoint=AgentCheckpoint(
        conversation, 2, {}, usage=USAGE))
    assert wire.out_of_turns(error) == wire.Answer("", "length", USAGE)


def test_a_completion_carries_the_answer_and_the_runs_usage() -> None:
    document = wire.completion("chatcmpl-r1", "helper", 1700, wire.answer(output()))
    assert document["object"] == "chat.completion"
    assert document["choices"] == [{"index": 0, "logprobs": None, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "Done.",
                                                "refusal": None}}]
    assert document["usage"] == {"prompt_tokens": 7, "completion_tokens": 5,
                                 "total_tokens": 12}


def test_chunks_open_with_the_role_and_end_with_the_finish_reason() -> None:
    writer = wire.ChunkWriter("chatcmpl-r1", "helper", 1700, include_usage=False)
    chunks = [json.loads(text) for text in [
        writer.opening(), writer.token("Hi", 1), *writer.ending(wire.Answer("Hi", "stop", USAGE))]]
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": ""}, {"content": "Hi"}, {}]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, "stop"]
    assert all("usage" not in c and c["object"] == "chat.completion.chunk" for c in chunks)


def test_with_include_usage_a_last_chunk_of_no_choices_carries_the_usage() -> None:
    writer = wire.ChunkWriter("chatcmpl-r1", "helper", 1700, include_usage=True)
    chunks = [json.loads(text) for text in [
        writer.opening(), writer.token("Hi", 1), *writer.ending(wire.Answer("", "stop", USAGE))]]
    assert [c["usage"] for c in chunks[:-1]] == [None, None, None]
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 5,
                                   "total_tokens": 12}


def test_the_text_of_a_later_turn_comes_after_a_blank_line() -> None:
    writer = wire.ChunkWriter("chatcmpl-r1", "helper", 1700, include_usage=False)
    texts = [json.loads(writer.token(text, turn))["choices"][0]["delta"]["content"]
             for text, turn in [("Let me ", 1), ("look.", 1), ("Found ", 2), ("it.", 2)]]
    assert "".join(texts) == "Let me look.\n\nFound it."


def test_a_tokens_chunk_carries_its_text_exactly() -> None:
    writer = wire.ChunkWriter("chatcmpl-r1", "helper", 1700, include_usage=False)
    text = 'a "quoted"\n\\ ünïcode \u2028 token'
    chunk = json.loads(writer.token(text, 1))
    assert chunk["choices"][0]["delta"] == {"content": text}
    assert chunk == json.loads(writer.opening()) | {"choices": [
        {"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}]}


def test_the_agents_are_listed_as_models() -> None:
    assert wire.model_list(["helper"], created=1700) == {"object": "list", "data": [
        {"id": "helper", "object": "model", "created": 1700, "owned_by": "bloge"}]}
