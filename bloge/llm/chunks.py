"""A response and the chunks of its stream, both ways.

:func:`response_chunks` is what a provider that computes its whole answer at once (the
offline model, the test providers, :class:`~bloge.llm.providers.ClaudeProvider` over a plain
transport) sends from ``stream_chat``; :func:`join_chunks` is the response that whoever reads a
stream (the agent loop, the test providers' ``chat``) gets back from its chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmChunk, LlmResponse, effective_finish_reason


def response_chunks(response: LlmResponse) -> list[LlmChunk]:
    """``response`` as a stream: word-sized text chunks, one chunk per tool call, and a last
    ``done`` chunk with the finish reason and usage."""
    chunks = [LlmChunk(content=piece) for piece in _pieces(response.content)]
    chunks.extend(LlmChunk(tool_call=call) for call in response.tool_calls)
    chunks.append(LlmChunk(done=True, finish_reason=response.finish_reason,
                           prompt_tokens=response.prompt_tokens,
                           completion_tokens=response.completion_tokens,
                           model=response.model,
                           cache_read_tokens=response.cache_read_tokens,
                           cache_write_tokens=response.cache_write_tokens,
                           fallback_from=response.fallback_from,
                           served_model=response.served_model))
    return chunks


def join_chunks(chunks: Sequence[LlmChunk]) -> LlmResponse:
    """The response one stream's chunks amount to: the text joined, the tool calls in order,
    and the finish reason and usage of the ``done`` chunk that ends the stream (see
    :func:`joined_response`).

    ``chunks`` end at the ``done`` chunk: whoever reads a stream stops there. A chunk whose
    ``content`` is ``None`` (a provider that passes OpenAI's ``null`` deltas on) adds no text.
    """
    last = chunks[-1] if chunks and chunks[-1].done else None
    # One comprehension per field, not a loop over the chunks: this runs on every streamed
    # model turn, over every token.
    return joined_response([chunk.content for chunk in chunks if chunk.content],
                           [chunk.tool_call for chunk in chunks if chunk.tool_call is not None],
                           last)


def joined_response(texts: Sequence[str], calls: Sequence[ToolCall],
                    done: LlmChunk | None) -> LlmResponse:
    """The response a stream amounts to, from what a reader kept of it: its ``texts`` (joined),
    its tool ``calls`` in order, and its ``done`` chunk, whose finish reason and usage it has
    (the finish reason inferred from the calls when the stream left it out; usage not reported
    when the stream ended without a ``done`` chunk, or its ``done`` chunk carried none).

    A reader keeps these rather than every chunk (the agent loop does: an open stream then
    holds its text, not a chunk object per token)."""
    return LlmResponse(
        content="".join(texts),
        finish_reason=effective_finish_reason(
            done.finish_reason if done else None, has_tool_calls=bool(calls)),
        prompt_tokens=(done.prompt_tokens or 0) if done else 0,
        completion_tokens=(done.completion_tokens or 0) if done else 0,
        tool_calls=tuple(calls),
        usage_reported=done is not None and (done.prompt_tokens is not None
                                             or done.completion_tokens is not None),
        model=done.model if done else "",
        cache_read_tokens=done.cache_read_tokens if done else 0,
        cache_write_tokens=done.cache_write_tokens if done else 0,
        fallback_from=done.fallback_from if done else (),
        served_model=done.served_model if done else None,
    )


def _pieces(text: str) -> list[str]:
    """Split text into word-sized pieces that join back to exactly ``text``."""
    pieces: list[str] = []
    start = 0
    for index, char in enumerate(text):
        if char == " " and index + 1 > start:
            pieces.append(text[start : index + 1])
            start = index + 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces
