"""Test models that ship with the library: scripted and function providers.

Both implement :class:`~bloge.llm.provider.LlmProvider`, answer ``chat`` and ``stream_chat``,
and record every request they receive, so tests can drive an agent without a network.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeAlias

from bloge.core.errors import BlogeUsageError
from bloge.llm.chunks import join_chunks, response_chunks
from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse

#: One scripted answer: a response, plain text, or the chunks of a streamed answer.
ScriptedAnswer: TypeAlias = LlmResponse | str | Sequence[LlmChunk]
AnswerFunction: TypeAlias = Callable[[LlmRequest], ScriptedAnswer | Awaitable[ScriptedAnswer]]


def as_response(answer: ScriptedAnswer) -> LlmResponse:
    """``answer`` as one complete response (chunks are joined as a provider would)."""
    if isinstance(answer, LlmResponse):
        return answer
    if isinstance(answer, str):
        return LlmResponse(content=answer)
    return join_chunks(answer)


def as_chunks(answer: ScriptedAnswer) -> list[LlmChunk]:
    """``answer`` as a stream: word-sized text chunks, one chunk per tool call, a final chunk."""
    if not isinstance(answer, (LlmResponse, str)):
        chunks = list(answer)
        if not chunks or not chunks[-1].done:
            chunks.append(LlmChunk(done=True))
        return chunks
    return response_chunks(as_response(answer))


def tool_call_response(name: str, arguments: str = "{}", *, call_id: str = "call_1",
                       content: str = "") -> LlmResponse:
    """A response asking for one tool call — a shorthand for scripts."""
    return LlmResponse(content=content, finish_reason="tool_calls",
                       tool_calls=(ToolCall(call_id, name, arguments),))


class _Recorder:
    """Bookkeeping shared by the test providers."""

    def __init__(self) -> None:
        self.requests: list[LlmRequest] = []
        self.streams_opened = 0
        self.streams_closed = 0

    async def _stream(self, chunks: list[LlmChunk]) -> AsyncIterator[LlmChunk]:
        self.streams_opened += 1
        try:
            for chunk in chunks:
                yield chunk
        finally:
            self.streams_closed += 1


class ScriptedProvider(_Recorder):
    """Plays back a fixed script of answers, one per call, in order.

    >>> provider = ScriptedProvider(tool_call_response("search", '{"q": "x"}'), "Done.")
    """

    def __init__(self, *answers: ScriptedAnswer) -> None:
        super().__init__()
        self._script: deque[ScriptedAnswer] = deque(answers)

    def add(self, *answers: ScriptedAnswer) -> None:
        self._script.extend(answers)

    @property
    def remaining(self) -> int:
        return len(self._script)

    def _next(self, request: LlmRequest) -> ScriptedAnswer:
        self.requests.append(request)
        if not self._script:
            raise BlogeUsageError(
                f"ScriptedProvider has no answer left for call #{len(self.requests)}"
            )
        return self._script.popleft()

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return as_response(self._next(request))

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        return self._stream(as_chunks(self._next(request)))

    def __repr__(self) -> str:
        return f"ScriptedProvider(remaining={len(self._script)})"


class FunctionProvider(_Recorder):
    """Answers each request with ``function(request)`` (sync or async)."""

    def __init__(self, function: AnswerFunction) -> None:
        super().__init__()
        self._function = function

    async def _answer(self, request: LlmRequest) -> ScriptedAnswer:
        self.requests.append(request)
        answer = self._function(request)
        if inspect.isawaitable(answer):
            return await answer
        return answer

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return as_response(await self._answer(request))

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        self.streams_opened += 1
        try:
            for chunk in as_chunks(await self._answer(request)):
                yield chunk
        finally:
            self.streams_closed += 1

    def __repr__(self) -> str:
        return f"FunctionProvider({getattr(self._function, '__name__', self._function)!r})"
