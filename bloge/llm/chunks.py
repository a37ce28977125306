"""A complete response as the chunks of a stream: what a provider that computes its whole
answer at once (the offline model, the test providers) sends from ``stream_chat``."""

from __future__ import annotations

from bloge.llm.types import LlmChunk, LlmResponse


def response_chunks(response: LlmResponse) -> list[LlmChunk]:
    """``response`` as a stream: word-sized text chunks, one chunk per tool call, and a last
    ``done`` chunk with the finish reason and usage."""
    chunks = [LlmChunk(content=piece) for piece in _pieces(response.content)]
    chunks.extend(LlmChunk(tool_call=call) for call in response.tool_calls)
    chunks.append(LlmChunk(done=True, finish_reason=response.finish_reason,
                           prompt_tokens=response.prompt_tokens,
                           completion_tokens=response.completion_tokens))
    return chunks


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
