"""Anthropic responses and streams in: text, tool calls, stop reasons, usage, errors."""

from __future__ import annotations

import pytest

from bloge.llm import LlmChunk, ToolCall
from bloge.llm.providers.anthropic import parse_messages_response
from bloge.llm.providers.anthropic_stream import AnthropicStreamAssembler
from bloge.llm.providers.wire import ServerStreamError, WireFormatError
from tests.llm.providers.wire_payloads import (
    ANTHROPIC_MODEL,
    WireCall,
    anthropic_error,
    anthropic_events,
    anthropic_message,
    text_block,
    tool_use_block,
)

PARIS = WireCall("toolu_01A09q90qw90lq917835lq9", "get_weather", ('{"city": ', '"Paris"}'))


def assemble(events: list[dict]) -> list[LlmChunk]:
    assembler = AnthropicStreamAssembler()
    chunks = [c for e in events for c in assembler.feed(e)]
    return chunks + assembler.finish()


def test_a_text_answer_gives_content_finish_reason_and_usage() -> None:
    response = parse_messages_response(anthropic_message([text_block("Hello!")],
                                                         input_tokens=25, output_tokens=15))
    assert (response.content, response.finish_reason, response.tool_calls) == ("Hello!", "stop", ())
    assert (response.prompt_tokens, response.completion_tokens) == (25, 15)


def test_tool_use_blocks_become_tool_calls_with_compact_json_arguments() -> None:
    body = anthropic_message([text_block("Let me check."), tool_use_block(PARIS)],
                             stop_reason="tool_use")
    response = parse_messages_response(body)
    assert response.content == "Let me check."
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (ToolCall(PARIS.id, "get_weather", '{"city":"Paris"}'),)


def test_parallel_tool_use_blocks_keep_their_order() -> None:
    rome = WireCall("toolu_02", "get_weather", ('{"city": "Rome"}',))
    body = anthropic_message([tool_use_block(PARIS), tool_use_block(rome)], stop_reason="tool_use")
    assert [c.id for c in parse_messages_response(body).tool_calls] == [PARIS.id, "toolu_02"]


def test_a_tool_without_input_gets_an_empty_object() -> None:
    body = anthropic_message([tool_use_block(WireCall("toolu_03", "list_tickets"))],
                             stop_reason="tool_use")
    assert parse_messages_response(body).tool_calls[0].arguments == "{}"


@pytest.mark.parametrize(("stop_reason", "finish_reason"), [
    ("end_turn", "stop"), ("tool_use", "tool_calls"), ("max_tokens", "length"),
    ("stop_sequence", "stop_sequence"), ("refusal", "refusal"),
])
def test_stop_reasons_map_to_finish_reasons(stop_reason: str, finish_reason: str) -> None:
    body = anthropic_message([text_block("x")], stop_reason=stop_reason)
    assert parse_messages_response(body).finish_reason == finish_reason


def test_cached_prompt_tokens_count_as_prompt_tokens() -> None:
    body = anthropic_message([text_block("x")], input_tokens=10)
    body["usage"].update(cache_creation_input_tokens=100, cache_read_input_tokens=1000)
    assert parse_messages_response(body).prompt_tokens == 1110


def test_an_error_body_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError, match="Overloaded"):
        parse_messages_response(anthropic_error("overloaded_error", "Overloaded"))


def test_a_tool_use_block_without_id_is_a_wire_format_error() -> None:
    body = anthropic_message([{"type": "tool_use", "name": "x", "input": {}}])
    with pytest.raises(WireFormatError, match="lacks its id"):
        parse_messages_response(body)


def test_streamed_text_arrives_delta_by_delta_and_pings_are_ignored() -> None:
    chunks = assemble(anthropic_events(["Hel", "lo"], input_tokens=25, output_tokens=15))
    assert chunks == [LlmChunk("Hel"), LlmChunk("lo"),
                      LlmChunk(done=True, finish_reason="stop", prompt_tokens=25,
                               completion_tokens=15, model=ANTHROPIC_MODEL)]


def test_a_streamed_tool_call_joins_its_json_deltas_after_an_empty_first_one() -> None:
    chunks = assemble(anthropic_events(["Checking."], calls=[PARIS]))
    assert chunks[1] == LlmChunk(tool_call=ToolCall(PARIS.id, "get_weather", '{"city": "Paris"}'))
    assert chunks[-1].finish_reason == "tool_calls"


def test_a_streamed_tool_without_arguments_gets_an_empty_object() -> None:
    chunks = assemble(anthropic_events(calls=[WireCall("toolu_04", "list_tickets")]))
    assert chunks[0].tool_call == ToolCall("toolu_04", "list_tickets", "{}")


def test_usage_comes_from_message_start_and_the_last_message_delta() -> None:
    chunks = assemble(anthropic_events(["x"], input_tokens=472, output_tokens=89))
    assert (chunks[-1].prompt_tokens, chunks[-1].completion_tokens) == (472, 89)


def test_unknown_events_and_deltas_are_skipped() -> None:
    events = anthropic_events(["Answer."])
    events[1:1] = [
        {"type": "content_block_start", "index": 5, "content_block": {"type": "thinking",
                                                                      "thinking": ""}},
        {"type": "content_block_delta", "index": 5,
         "delta": {"type": "thinking_delta", "thinking": "Let me think"}},
        {"type": "content_block_stop", "index": 5},
        {"type": "some_future_event"},
    ]
    assert [c.content for c in assemble(events)] == ["Answer.", ""]


def test_an_error_event_raises_with_the_servers_message() -> None:
    assembler = AnthropicStreamAssembler()
    with pytest.raises(ServerStreamError, match="Overloaded") as caught:
        assembler.feed(anthropic_error("overloaded_error", "Overloaded"))
    assert caught.value.retryable


def test_an_invalid_request_error_event_is_not_retryable() -> None:
    with pytest.raises(ServerStreamError) as caught:
        AnthropicStreamAssembler().feed(anthropic_error("invalid_request_error", "Bad"))
    assert not caught.value.retryable


def test_the_assembler_knows_whether_the_answer_finished() -> None:
    events = anthropic_events(["x"])
    assembler = AnthropicStreamAssembler()
    for event in events[:-2]:
        assembler.feed(event)
    assert not assembler.finished
    assembler.feed(events[-2])
    assert assembler.finished
    assert not assembler.stopped
    assembler.feed(events[-1])
    assert assembler.stopped
