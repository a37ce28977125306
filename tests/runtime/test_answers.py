"""A streamed answer read by the loop (bloge.agent.loop.answers.response_of): the response its
chunks amount to, its texts handed on as they come, and no chunk held once it is handed on."""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bloge.agent.loop.answers import response_of
from bloge.agent.loop.chunks import Token
from bloge.llm import LlmChunk, LlmResponse, ToolCall
from bloge.llm.chunks import join_chunks

CALL = ToolCall("c1", "search", '{"q": "x"}')
NONE: Any = None  # a content of None: what a provider passing OpenAI's null deltas on yields

STREAMS = {
    "text and usage": [LlmChunk("Hel"), LlmChunk("lo"),
                       LlmChunk(done=True, finish_reason="stop", prompt_tokens=3,
                                completion_tokens=2, model="m", served_model="m-1")],
    "tool calls, no finish reason": [LlmChunk("Checking."), LlmChunk(NONE, tool_call=CALL),
                                     LlmChunk(tool_call=ToolCall("c2", "t", "{}")),
                                     LlmChunk(done=True)],
    "text on the done chunk": [LlmChunk("A"), LlmChunk(" b", done=True, finish_reason="length")],
    "no done chunk": [LlmChunk(NONE), LlmChunk("Hi")],
    "empty": [],
}


async def _streamed(chunks: list[LlmChunk]) -> AsyncIterator[LlmChunk]:
    for chunk in chunks:
        yield chunk


@pytest.mark.parametrize("chunks", STREAMS.values(), ids=STREAMS.keys())
async def test_a_streamed_answer_is_the_response_its_chunks_join_to(
        chunks: list[LlmChunk]) -> None:
    tokens: list[Token] = []

    async def sink(item: object) -> None:
        assert isinstance(item, Token)
        tokens.append(item)

    response = await response_of(_streamed(chunks), "chat", sink, 2)

    assert response == join_chunks(chunks)
    assert [token.text for token in tokens] == [c.content for c in chunks if c.content]
    assert {token.turn_number for token in tokens} <= {2}


async def test_reading_stops_at_the_done_chunk() -> None:
    chunks = [LlmChunk("Hi"), LlmChunk(done=True, finish_reason="stop"), LlmChunk("late")]
    assert await response_of(_streamed(chunks), "chat", None, 1) == LlmResponse(
        "Hi", usage_reported=False)


class _Tracked(LlmChunk):
    """A chunk that can be watched (an ``LlmChunk`` has slots and no weak references)."""


async def test_a_chunk_handed_on_is_not_held_while_the_stream_goes_on() -> None:
    """An open stream holds its text, not every chunk it relayed: a chunk is freed once the
    next has been read (the loop's own variable holds the last one read)."""
    handed: list[weakref.ref[_Tracked]] = []
    held_at_third: list[bool] = []

    async def stream() -> AsyncIterator[LlmChunk]:
        for text in ("one ", "two ", "three"):
            if len(handed) == 2:
                held_at_third.append(handed[0]() is not None)
            chunk = _Tracked(text)
            handed.append(weakref.ref(chunk))
            yield chunk
            del chunk
        yield LlmChunk(done=True, finish_reason="stop")

    response = await response_of(stream(), "chat", None, 1)

    assert response.content == "one two three"
    assert held_at_third == [False]
