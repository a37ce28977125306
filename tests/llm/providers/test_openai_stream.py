"""Assembling streamed Chat Completions, including the faults of compatible servers."""

from __future__ import annotations

import pytest

from bloge.llm import LlmChunk, ToolCall
from bloge.llm.providers.openai_stream import OpenAIStreamAssembler
from bloge.llm.providers.wire import ServerStreamError, WireFormatError
from tests.llm.providers.wire_payloads import (
    WireCall,
    openai_call_fragment,
    openai_chunk,
    openai_stream,
    openai_text_delta,
    openai_usage,
)


def assemble(chunks: list[dict]) -> list[LlmChunk]:
    assembler = OpenAIStreamAssembler()
    out = [c for payload in chunks for c in assembler.feed(payload)]
    return out + assembler.finish()


def calls_of(chunks: list[LlmChunk]) -> list[ToolCall]:
    return [c.tool_call for c in chunks if c.tool_call]


def finished(reason: str = "tool_calls") -> dict:
    return openai_chunk({}, finish_reason=reason)


def test_text_arrives_chunk_by_chunk_then_done_with_usage_from_the_last_chunk() -> None:
    chunks = assemble(openai_stream(["Hel", "lo", "!"], prompt=9, completion=3))
    assert chunks == [LlmChunk("Hel"), LlmChunk("lo"), LlmChunk("!"),
                      LlmChunk(done=True, finish_reason="stop", prompt_tokens=9,
                               completion_tokens=3)]


def test_argument_fragments_are_joined_per_call() -> None:
    call = WireCall("call_1", "get_weather", ('{"ci', 'ty": "Pa', 'ris"}'))
    chunks = assemble(openai_stream(calls=[call]))
    assert calls_of(chunks) == [ToolCall("call_1", "get_weather", '{"city": "Paris"}')]
    assert chunks[-1].finish_reason == "tool_calls"


def test_text_before_tool_calls_comes_first() -> None:
    call = WireCall("call_1", "get_weather", ('{"city":"Paris"}',))
    chunks = assemble(openai_stream(["Let me check."], calls=[call]))
    assert [c.content for c in chunks[:1]] == ["Let me check."]
    assert chunks[1].tool_call == ToolCall("call_1", "get_weather", '{"city":"Paris"}')
    assert chunks[2].done


def test_parallel_calls_come_out_in_the_order_they_started() -> None:
    calls = [WireCall("call_1", "a", ('{"x":', "1}")), WireCall("call_2", "b", ('{"y":2}',))]
    assert calls_of(assemble(openai_stream(calls=calls))) == [
        ToolCall("call_1", "a", '{"x":1}'), ToolCall("call_2", "b", '{"y":2}')]


def test_interleaved_fragments_of_parallel_calls_follow_their_index() -> None:
    chunks = assemble([
        openai_call_fragment(0, id="call_1", name="a"),
        openai_call_fragment(1, id="call_2", name="b"),
        openai_call_fragment(0, arguments='{"x":'),
        openai_call_fragment(1, arguments='{"y":2}'),
        openai_call_fragment(0, arguments="1}"),
        finished(),
    ])
    assert calls_of(chunks) == [ToolCall("call_1", "a", '{"x":1}'), ToolCall("call_2", "b", '{"y":2}')]


def test_a_call_without_arguments_gets_an_empty_object() -> None:
    chunks = assemble([openai_call_fragment(0, id="call_1", name="list_tickets"), finished()])
    assert calls_of(chunks) == [ToolCall("call_1", "list_tickets", "{}")]


def test_a_new_id_at_index_zero_starts_a_new_call() -> None:
    # Ollama sends every call whole, each at index 0.
    chunks = assemble([
        openai_call_fragment(0, id="call_a", name="a", arguments='{"x":1}'),
        openai_call_fragment(0, id="call_b", name="b", arguments='{"y":2}'),
        finished(),
    ])
    assert calls_of(chunks) == [ToolCall("call_a", "a", '{"x":1}'), ToolCall("call_b", "b", '{"y":2}')]


def test_fragments_without_index_continue_the_latest_call() -> None:
    chunks = assemble([
        openai_call_fragment(None, id="call_a", name="a"),
        openai_call_fragment(None, arguments='{"x":'),
        openai_call_fragment(None, arguments="1}"),
        finished(),
    ])
    assert calls_of(chunks) == [ToolCall("call_a", "a", '{"x":1}')]


def test_fragments_repeating_their_id_continue_that_call() -> None:
    chunks = assemble([
        openai_call_fragment(0, id="call_a", name="a", arguments='{"x":'),
        openai_call_fragment(0, id="call_a", arguments="1}"),
        finished(),
    ])
    assert calls_of(chunks) == [ToolCall("call_a", "a", '{"x":1}')]


def test_a_named_fragment_after_complete_arguments_at_the_same_index_is_a_new_call() -> None:
    # vLLM has sent consecutive calls at index 0 without ids.
    chunks = assemble([
        openai_call_fragment(0, name="a", arguments='{"x":1}'),
        openai_call_fragment(0, name="b", arguments='{"y":'),
        openai_call_fragment(0, arguments="2}"),
        finished(),
    ])
    calls = calls_of(chunks)
    assert [(c.name, c.arguments) for c in calls] == [("a", '{"x":1}'), ("b", '{"y":2}')]
    assert all(c.id.startswith("call_") for c in calls)
    assert calls[0].id != calls[1].id


def test_a_repeated_name_while_arguments_are_incomplete_continues_the_call() -> None:
    chunks = assemble([
        openai_call_fragment(0, name="a", arguments='{"x":'),
        openai_call_fragment(0, name="a", arguments="1}"),
        finished(),
    ])
    assert [(c.name, c.arguments) for c in calls_of(chunks)] == [("a", '{"x":1}')]


def test_streamed_tool_calls_with_finish_reason_stop_finish_with_tool_calls() -> None:
    chunks = assemble([openai_call_fragment(0, id="call_1", name="a", arguments="{}"),
                       finished("stop")])
    assert chunks[-1].finish_reason == "tool_calls"


def test_usage_may_arrive_with_the_finish_reason() -> None:
    chunks = assemble([openai_text_delta("Hi"),
                       openai_chunk({}, finish_reason="stop", usage=openai_usage(5, 1))])
    assert chunks[-1] == LlmChunk(done=True, finish_reason="stop", prompt_tokens=5,
                                  completion_tokens=1)


def test_without_usage_the_done_chunk_has_no_token_counts() -> None:
    chunks = assemble([openai_text_delta("Hi"), finished("length")])
    assert chunks[-1] == LlmChunk(done=True, finish_reason="length")


def test_an_error_payload_raises_the_server_message() -> None:
    with pytest.raises(ServerStreamError, match="upstream timed out"):
        OpenAIStreamAssembler().feed({"error": {"message": "upstream timed out", "type": "server_error"}})


def test_a_call_that_never_names_its_function_is_a_wire_format_error() -> None:
    assembler = OpenAIStreamAssembler()
    assembler.feed(openai_call_fragment(0, id="call_1", arguments="{}"))
    with pytest.raises(WireFormatError, match="never named"):
        assembler.finish()


def test_the_assembler_knows_whether_the_answer_finished() -> None:
    assembler = OpenAIStreamAssembler()
    assembler.feed(openai_text_delta("Hi"))
    assert not assembler.finished
    assembler.feed(finished("stop"))
    assert assembler.finished
