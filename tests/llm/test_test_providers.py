"""The test providers shipped with the library."""

from __future__ import annotations

import pytest

from bloge import BlogeUsageError
from bloge.llm import (
    FunctionProvider,
    LlmChunk,
    LlmMessage,
    LlmProvider,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
    tool_call_response,
)

REQUEST = LlmRequest("m", (LlmMessage.user("hi"),))


async def collect(provider: LlmProvider, request: LlmRequest = REQUEST) -> list[LlmChunk]:
    return [chunk async for chunk in provider.stream_chat(request)]


async def test_scripted_answers_come_in_order_and_requests_are_recorded() -> None:
    provider = ScriptedProvider("first", LlmResponse("second", finish_reason="length"))
    assert (await provider.chat(REQUEST)).content == "first"
    assert (await provider.chat(REQUEST)).finish_reason == "length"
    assert provider.requests == [REQUEST, REQUEST]
    with pytest.raises(BlogeUsageError, match="no answer left for call #3"):
        await provider.chat(REQUEST)


async def test_a_response_streams_as_word_chunks_tool_calls_and_a_final_chunk() -> None:
    response = LlmResponse("two words", finish_reason="tool_calls", prompt_tokens=3,
                           completion_tokens=2, tool_calls=(ToolCall("c", "t", "{}"),))
    chunks = await collect(ScriptedProvider(response))
    assert [c.content for c in chunks[:2]] == ["two ", "words"]
    assert chunks[2].tool_call == ToolCall("c", "t", "{}")
    assert chunks[3] == LlmChunk(done=True, finish_reason="tool_calls", prompt_tokens=3,
                                 completion_tokens=2)


async def test_chunks_join_into_a_response_with_an_inferred_finish_reason() -> None:
    with_call = [LlmChunk(content="a"), LlmChunk(tool_call=ToolCall("c", "t", "{}")),
                 LlmChunk(done=True)]
    response = await ScriptedProvider(with_call).chat(REQUEST)
    assert (response.content, response.finish_reason) == ("a", "tool_calls")
    plain = await ScriptedProvider([LlmChunk(content="b"), LlmChunk(done=True)]).chat(REQUEST)
    assert plain.finish_reason == "stop"


async def test_a_function_provider_answers_from_sync_or_async_functions() -> None:
    async def answer(request: LlmRequest) -> LlmResponse:
        return tool_call_response("search", '{"q": 1}')

    provider = FunctionProvider(lambda request: f"echo {request.messages[-1].content}")
    assert (await provider.chat(REQUEST)).content == "echo hi"
    streamed = await collect(FunctionProvider(answer))
    assert streamed[0].tool_call == ToolCall("call_1", "search", '{"q": 1}')
    assert streamed[-1].done


async def test_streams_report_when_they_are_closed_early() -> None:
    provider = ScriptedProvider("many words in this answer")
    stream = provider.stream_chat(REQUEST)
    await anext(stream)
    await stream.aclose()
    assert (provider.streams_opened, provider.streams_closed) == (1, 1)
