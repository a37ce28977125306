"""One model call, whole or streamed: a chat operator's answer as the response a run goes on with.

The ``"llmChat"`` operator answers with an :class:`~bloge.llm.types.LlmResponse`; the
``"llmStreamingChat"`` operator with an async iterator of :class:`~bloge.llm.types.LlmChunk`,
whose text goes to the run's sink as it comes and whose texts, tool calls and ``done`` chunk
:func:`~bloge.llm.chunks.joined_response` makes the response. The loop and the Temporal
model activity take either answer from either operator through :func:`response_of`, so that a
streamed turn and a whole one differ only there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from bloge.agent.loop.chunks import Token
from bloge.agent.loop.tools import ChunkSink
from bloge.core.errors import BlogeUsageError
from bloge.llm.chunks import joined_response
from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmChunk, LlmResponse


async def response_of(answer: object, chat: str, sink: ChunkSink | None,
                      turn: int) -> LlmResponse:
    """The response ``answer`` (what the operator named ``chat`` returned in turn ``turn``)
    amounts to: a response as it is; a stream read to its ``done`` chunk, each text handed to
    ``sink`` as it comes, the stream closed, and its chunks joined. Anything else is a
    :class:`~bloge.core.errors.BlogeUsageError` (:func:`not_an_answer`)."""
    if isinstance(answer, LlmResponse):
        return answer
    if not isinstance(answer, AsyncIterator):
        raise BlogeUsageError(not_an_answer(chat, answer))
    # The texts and calls are kept as they come and joined once at the end: cheaper per token
    # than assembling the response chunk by chunk. Not the chunks themselves: an open stream
    # would hold a chunk object per token it relayed (120 bytes each, beside its text).
    texts: list[str] = []
    calls: list[ToolCall] = []
    done: LlmChunk | None = None
    try:
        async for chunk in answer:
            if text := chunk.content:
                texts.append(text)
                if sink is not None:
                    await sink(Token(text, turn))
            if chunk.tool_call is not None:
                calls.append(chunk.tool_call)
            if chunk.done:
                done = chunk
                break
    finally:
        close = getattr(answer, "aclose", None)
        if close is not None:
            await close()
    return joined_response(texts, calls, done)


def not_an_answer(chat: str, answer: object) -> str:
    """Why ``answer``, returned by the operator named ``chat``, is no model answer."""
    return (f"the {chat!r} operator returned a {type(answer).__name__}, not an LlmResponse "
            "or an async iterator of LlmChunk")
