"""A response and the chunks of its stream, both ways (bloge.llm.chunks)."""

from __future__ import annotations

from typing import Any

import pytest

from bloge.llm import LlmChunk, LlmResponse, ToolCall
from bloge.llm.chunks import join_chunks, response_chunks

CALL = ToolCall("c1", "search", '{"q": "x"}')

RESPONSES = {
    "text": LlmResponse("Three short words.", prompt_tokens=7, completion_tokens=3),
    "tool calls": LlmResponse("Let me look.", finish_reason="tool_calls", prompt_tokens=9,
                              completion_tokens=4, tool_calls=(CALL, ToolCall("c2", "t", "{}"))),
    "cut off": LlmResponse("It was a dark and", finish_reason="length"),
    "spaces": LlmResponse("  two  spaces, then a trailing one "),
    "empty": LlmResponse(),
}


@pytest.mark.parametrize("response", RESPONSES.values(), ids=RESPONSES.keys())
def test_a_response_streamed_then_joined_is_the_same_response(response: LlmResponse) -> None:
    assert join_chunks(response_chunks(response)) == response


def test_a_stream_without_a_finish_reason_finishes_for_its_tool_calls() -> None:
    chunks = [LlmChunk("Checking."), LlmChunk(tool_call=CALL), LlmChunk(done=True)]
    assert join_chunks(chunks) == LlmResponse("Checking.", finish_reason="tool_calls",
                                              tool_calls=(CALL,), usage_reported=False)


def test_a_stream_that_ended_without_a_done_chunk_joins_with_usage_not_reported() -> None:
    assert join_chunks([LlmChunk("Hel"), LlmChunk("lo")]) == LlmResponse(
        "Hello", usage_reported=False)


def test_a_stream_whose_done_chunk_carries_no_usage_joins_with_usage_not_reported() -> None:
    joined = join_chunks([LlmChunk("Hi"), LlmChunk(done=True, finish_reason="stop")])
    assert (joined.usage_reported, joined.total_tokens) == (False, 0)


def test_a_stream_whose_done_chunk_carries_usage_joins_with_it() -> None:
    joined = join_chunks([LlmChunk("Hi"), LlmChunk(done=True, prompt_tokens=5,
                                                   completion_tokens=0)])
    assert (joined.usage_reported, joined.prompt_tokens) == (True, 5)


def test_a_chunk_whose_content_is_none_adds_no_text() -> None:
    none: Any = None  # what a provider that passes OpenAI's null deltas on yields
    chunks = [LlmChunk(none), LlmChunk("Hi"), LlmChunk(none, tool_call=CALL),
              LlmChunk(done=True, finish_reason="tool_calls")]
    assert join_chunks(chunks).content == "Hi"
