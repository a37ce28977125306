"""``ClaudeProvider``: the runtime chapter's Claude provider, a pure request builder plus an
injectable transport.

The chapter left the real HTTP transport to the application; we ship it: without a
``transport``, :class:`ClaudeProvider` sends through an :class:`AnthropicProvider` built from
``ANTHROPIC_API_KEY`` (and ``ANTHROPIC_BASE_URL`` when set).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any, Self, TypeAlias

from bloge.core.errors import BlogeUsageError, ProviderError
from bloge.llm.chunks import response_chunks
from bloge.llm.providers.anthropic import messages_request_for, parse_messages_response
from bloge.llm.providers.anthropic_provider import DEFAULT_BASE_URL, AnthropicProvider
from bloge.llm.providers.wire import WireFormatError
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse

ClaudeTransport: TypeAlias = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends a Messages request body and returns the response JSON (``AnthropicProvider`` is one)."""

DEFAULT_MODEL = "claude-opus-4-8"


class ClaudeProvider:
    """An :class:`~bloge.llm.LlmProvider` that builds each request with
    :func:`~bloge.llm.providers.anthropic.build_messages_request` and hands it to
    ``transport``.

    ``model`` is used when a request names none; ``max_tokens`` when it sets none; ``system``
    comes before the request's own system messages. With an :class:`AnthropicProvider` as
    transport (the default) streaming is real; with any other transport, :meth:`stream_chat`
    makes one call and replays the answer as chunks
    (:func:`~bloge.llm.chunks.response_chunks`).
    """

    __slots__ = ("_owned", "_transport", "max_tokens", "model", "system")

    def __init__(
        self,
        transport: ClaudeTransport | None = None,
        *,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 1024,
        system: str = "",
    ) -> None:
        self._owned: AnthropicProvider | None = None
        if transport is None:
            api_key = os.environ.get("ANTHROPIC_API_KEY", "")
            if not api_key:
                raise BlogeUsageError(
                    "ClaudeProvider needs a transport, or ANTHROPIC_API_KEY in the environment "
                    "for its default HTTP transport"
                )
            base_url = os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
            transport = self._owned = AnthropicProvider(base_url=base_url, api_key=api_key)
        self._transport = transport
        self.model = model
        self.max_tokens = max_tokens
        self.system = system

    def build_request(self, request: LlmRequest) -> dict[str, Any]:
        """The body this provider sends for ``request``."""
        return messages_request_for(
            request, model=self.model, max_tokens=self.max_tokens, system=self.system
        )

    async def chat(self, request: LlmRequest) -> LlmResponse:
        body = await self._transport(self.build_request(request))
        try:
            return parse_messages_response(body, model=request.model or self.model)
        except WireFormatError as exc:
            raise ProviderError(str(exc), provider="anthropic") from exc

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        transport = self._transport
        if isinstance(transport, AnthropicProvider):
            async with aclosing(transport.stream_messages(self.build_request(request))) as chunks:
                async for chunk in chunks:
                    yield chunk
            return
        for chunk in response_chunks(await self.chat(request)):
            yield chunk

    async def aclose(self) -> None:
        """Close the default transport; a transport passed in belongs to its owner."""
        if self._owned is not None:
            await self._owned.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, transport={self._transport!r})"

