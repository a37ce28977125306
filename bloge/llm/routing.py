"""``ModelRouter``: one provider per family of models, chosen by the model's name.

With ``{"claude-*": anthropic, "*": openai}`` an agent whose models are ``["gpt-4o",
"claude-sonnet-4-5"]`` falls back from OpenAI to Anthropic: each request goes to the provider
of the first pattern its model matches (shell-style patterns, tried in order).
"""

from __future__ import annotations

import fnmatch
from collections.abc import AsyncIterator, Mapping

from bloge.core.errors import BlogeUsageError
from bloge.llm.fallback import route_of
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse


class ModelRouter:
    """An :class:`~bloge.llm.LlmProvider` that hands each request to the provider whose
    pattern its model matches first; a model no pattern matches goes to ``default``, and
    without one is a :class:`~bloge.core.errors.BlogeUsageError` naming the patterns."""

    __slots__ = ("default", "routes")

    def __init__(self, routes: Mapping[str, LlmProvider], *,
                 default: LlmProvider | None = None) -> None:
        if not routes and default is None:
            raise BlogeUsageError("a ModelRouter needs at least one route or a default")
        self.routes = dict(routes)
        self.default = default

    def provider_for(self, model: str) -> LlmProvider:
        """The provider that answers ``model``."""
        for pattern, provider in self.routes.items():
            if fnmatch.fnmatchcase(model, pattern):
                return provider
        if self.default is None:
            raise BlogeUsageError(f"no provider for model {model!r}: it matches none of the "
                                  f"routes {', '.join(map(repr, self.routes))}")
        return self.default

    def route(self, model: str) -> str:
        """Where a call of ``model`` goes (a circuit breaker's key)."""
        return route_of(self.provider_for(model), model)

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return await self.provider_for(request.model).chat(request)

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        return self.provider_for(request.model).stream_chat(request)

    async def aclose(self) -> None:
        """Close every provider routed to (each once)."""
        every = [*self.routes.values(), *([self.default] if self.default else [])]
        for provider in {id(p): p for p in every}.values():
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def __repr__(self) -> str:
        return f"ModelRouter({self.routes!r}, default={self.default!r})"
