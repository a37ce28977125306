"""The chat operators the agent loop calls by their standard registry names."""

from __future__ import annotations

from collections.abc import AsyncIterator

from bloge.core.context import OperatorContext
from bloge.core.operator import OperatorMetadata
from bloge.llm.breaker import CircuitBreaker
from bloge.llm.fallback import DEFAULT_ATTEMPTS, ModelFallback
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse

#: Registry name of the synchronous (whole-answer) chat operator.
LLM_CHAT = "llmChat"
#: Registry name of the streaming chat operator.
LLM_STREAMING_CHAT = "llmStreamingChat"


class _ProviderOperator:
    """A chat operator over one provider; the two below differ only in how it answers.

    A request that lists ``fallback`` models is answered by :class:`~bloge.llm.fallback.
    ModelFallback`: its next model when a call fails over, each model watched by
    ``breaker`` (share one between the whole and the streaming operator, and through a store
    between workers: see :mod:`bloge.llm.breaker`; default: this operator's own); a model with
    another after it makes at most ``fallback_attempts`` attempts (``None``: its provider's).
    """

    __slots__ = ("fallback", "provider")

    def __init__(self, provider: LlmProvider, *, breaker: CircuitBreaker | None = None,
                 fallback_attempts: int | None = DEFAULT_ATTEMPTS) -> None:
        self.provider = provider
        self.fallback = ModelFallback(provider, breaker, attempts=fallback_attempts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.provider!r})"


class LlmChatOperator(_ProviderOperator):
    """Answers an :class:`LlmRequest` with the provider's complete :class:`LlmResponse`.

    Register it as ``"llmChat"``; the agent loop routes every model call through it.
    """

    metadata = OperatorMetadata(prompt_hint="Call the chat model with a request.")

    __slots__ = ()

    async def execute(self, input: LlmRequest, ctx: OperatorContext) -> LlmResponse:
        if input.fallback:
            return await self.fallback.chat(input)
        return await self.provider.chat(input)


class LlmStreamingChatOperator(_ProviderOperator):
    """Answers an :class:`LlmRequest` with the provider's stream of :class:`LlmChunk`, which
    the agent loop joins into the response (:func:`~bloge.llm.chunks.join_chunks`) while it
    passes the text on.

    Register it as ``"llmStreamingChat"`` for streaming agents.
    """

    metadata = OperatorMetadata(prompt_hint="Stream the chat model's answer to a request.")

    __slots__ = ()

    async def execute(
        self,
        input: LlmRequest,
        ctx: OperatorContext,
    ) -> AsyncIterator[LlmChunk]:
        if input.fallback:
            return self.fallback.stream(input)
        return self.provider.stream_chat(input)
