"""``ModelAliases``: one DSL, any provider — rewrite model names on the way out."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping

from bloge.llm.fallback import route_of
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse


class ModelAliases:
    """An ``LlmProvider`` that sends ``aliases[request.model]`` instead of ``request.model``.

    With ``{"gpt-4o": "claude-sonnet-4-5"}`` an agent written for ``gpt-4o`` runs on an
    Anthropic provider unchanged. Names without an alias pass through.
    """

    __slots__ = ("aliases", "provider")

    def __init__(self, provider: LlmProvider, aliases: Mapping[str, str]) -> None:
        self.provider = provider
        self.aliases = dict(aliases)

    def _renamed(self, request: LlmRequest) -> LlmRequest:
        target = self.aliases.get(request.model)
        return request if target is None else dataclasses.replace(request, model=target)

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return await self.provider.chat(self._renamed(request))

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        return self.provider.stream_chat(self._renamed(request))

    def route(self, model: str) -> str:
        """Where a call of ``model`` goes: the provider's route of its alias."""
        return route_of(self.provider, self.aliases.get(model, model))

    async def aclose(self) -> None:
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"ModelAliases({self.provider!r}, {self.aliases!r})"
