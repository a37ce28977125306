"""Fallback models: a call that fails over is asked of the request's next model.

An agent lists its models in order (``model = ["gpt-4o", "claude-sonnet-4-5"]``); each
request carries the first as ``model`` and the others as ``fallback``. :class:`ModelFallback`
asks them in turn, and stops at the first answer. Only a failure another model may not share
moves on (:func:`fails_over`): a rate limit or exhausted quota (429, 402, a quota message),
an overloaded or failing server (5xx, Anthropic's 529), a timeout or a connection that could
not be made — each after the provider's own retries. A request the server refused (400 and
the other 4xx) would be refused by the next model too, and fails the call at once; so does
a refusal, which is an answer.

A stream fails over only until its first chunk arrives: after that part of the answer has
reached the caller, and a failure ends the call.

Each model but the last makes at most ``attempts`` attempts (2: one retry) of its provider's
retry policy before the next model is asked; the last keeps the whole policy.

A :class:`~bloge.llm.breaker.CircuitBreaker` watches each model (by its route: provider and
model): while one is open its model is skipped, unless every model's is. The response says
which model answered (``model``) and which were tried before it (``fallback_from``).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import NoReturn

from bloge.core.errors import ProviderError
from bloge.llm.attempts import attempts_capped
from bloge.llm.breaker import BreakerState, CircuitBreaker
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse

_log = logging.getLogger("bloge.llm.fallback")

#: Attempts a model with a fallback after it makes before the fallback answers (its
#: provider's retries cut short; see :mod:`bloge.llm.attempts`).
DEFAULT_ATTEMPTS = 2

#: Client errors that mean the account, not the request: out of credit or of quota.
_QUOTA = re.compile(r"insufficient_quota|quota|credit balance|billing", re.IGNORECASE)


def fails_over(error: BaseException) -> bool:
    """Whether a call that failed with ``error`` should be asked of the next model: 429,
    402, 408, any 5xx (529 included), a 4xx about quota or credit, a timeout or a connection
    error; never another 4xx (400: the request itself is wrong)."""
    if isinstance(error, ProviderError):
        status = error.status_code
        if status is None:
            # Timeouts, refused connections, an overloaded stream: the retryable failures
            # without a status. A malformed answer is not one.
            return error.retryable
        if status in (402, 408, 429) or 500 <= status <= 599:
            return True
        return 400 <= status < 500 and bool(_QUOTA.search(str(error)))
    return isinstance(error, TimeoutError | ConnectionError)


def route_of(provider: object, model: str) -> str:
    """Where a call of ``model`` on ``provider`` goes, as a breaker's key: the provider's own
    ``route(model)`` when it has one (the HTTP providers, aliases and routers do), else the
    provider's class and the model."""
    route = getattr(provider, "route", None)
    if callable(route):
        found = route(model)
        if isinstance(found, str) and found:
            return found
    return f"{type(provider).__name__}:{model}"


class ModelFallback:
    """Answers a request from its first model that does not fail over (see the module),
    through ``provider``, with ``breaker`` watching each model."""

    __slots__ = ("attempts", "breaker", "provider")

    def __init__(self, provider: LlmProvider, breaker: CircuitBreaker | None = None, *,
                 attempts: int | None = DEFAULT_ATTEMPTS) -> None:
        self.provider = provider
        self.breaker = breaker if breaker is not None else CircuitBreaker()
        self.attempts = attempts

    async def chat(self, request: LlmRequest) -> LlmResponse:
        """The first answer of the request's models."""
        tried: list[str] = []
        failures: list[str] = []
        plan = await self._plan(request)
        for index, (model, key, state) in enumerate(plan):
            try:
                with attempts_capped(None if index + 1 == len(plan) else self.attempts):
                    response = await self.provider.chat(_for(request, model))
            except Exception as error:
                if not fails_over(error):
                    raise
                await self.breaker.failed(key)
                failures.append(f"{model}: {error}")
                if index + 1 == len(plan):
                    _raise_exhausted(error, failures)
                _log.warning("model %s failed over (%s); asking %s", model, error,
                             plan[index + 1][0])
                tried.append(model)
                continue
            await self.breaker.succeeded(key, state)
            return dataclasses.replace(response, model=response.model or model,
                                       fallback_from=(*_skipped(request, plan), *tried))
        raise AssertionError("a fallback plan always has a model")  # pragma: no cover

    async def stream(self, request: LlmRequest) -> AsyncGenerator[LlmChunk, None]:
        """The stream of the first model whose stream starts: a model whose stream fails
        before its first chunk fails over; after it, a failure ends the stream."""
        tried: list[str] = []
        failures: list[str] = []
        plan = await self._plan(request)
        for index, (model, key, state) in enumerate(plan):
            chunks = self.provider.stream_chat(_for(request, model))
            try:
                with attempts_capped(None if index + 1 == len(plan) else self.attempts):
                    first = await anext(chunks, None)
            except Exception as error:
                await _close(chunks)
                if not fails_over(error):
                    raise
                await self.breaker.failed(key)
                failures.append(f"{model}: {error}")
                if index + 1 == len(plan):
                    _raise_exhausted(error, failures)
                _log.warning("model %s failed over before its first token (%s); asking %s",
                             model, error, plan[index + 1][0])
                tried.append(model)
                continue
            await self.breaker.succeeded(key, state)
            before = (*_skipped(request, plan), *tried)
            async with aclosing(_answered(first, chunks, model, before)) as answered:
                async for chunk in answered:
                    yield chunk
            return

    async def _plan(self, request: LlmRequest) -> list[tuple[str, str, BreakerState]]:
        """The request's models in order, with their keys and breaker states; those whose
        breaker is open left out, unless every one's is."""
        models = list(dict.fromkeys((request.model, *request.fallback)))
        every = []
        for model in models:
            key = route_of(self.provider, model)
            every.append((model, key, await self.breaker.state(key)))
        closed = [entry for entry in every if not self.breaker.open_for(entry[2])]
        if closed and len(closed) < len(every):
            skipped = [entry[0] for entry in every if entry not in closed]
            _log.info("skipping %s: circuit breaker open", ", ".join(skipped))
        return closed or every

    def __repr__(self) -> str:
        return f"ModelFallback({self.provider!r}, {self.breaker!r})"


def _for(request: LlmRequest, model: str) -> LlmRequest:
    return dataclasses.replace(request, model=model, fallback=())


def _skipped(request: LlmRequest, plan: list[tuple[str, str, BreakerState]]) -> tuple[str, ...]:
    """The request's models left out of ``plan`` (their breakers open) before the first one
    asked."""
    planned = {model for model, _, _ in plan}
    first = plan[0][0]
    skipped = []
    for model in (request.model, *request.fallback):
        if model == first:
            break
        if model not in planned:
            skipped.append(model)
    return tuple(skipped)


async def _answered(first: LlmChunk | None, chunks: AsyncIterator[LlmChunk], model: str,
                    before: tuple[str, ...]) -> AsyncGenerator[LlmChunk, None]:
    """The stream from ``first`` on, its ``done`` chunk saying who answered."""
    try:
        chunk = first
        while chunk is not None:
            yield (dataclasses.replace(chunk, model=chunk.model or model, fallback_from=before)
                   if chunk.done else chunk)
            chunk = await anext(chunks, None)
    finally:
        await _close(chunks)


async def _close(chunks: AsyncIterator[LlmChunk]) -> None:
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()


def _raise_exhausted(last: Exception, failures: list[str]) -> NoReturn:
    """Raise the error of a call whose every model failed over: the last one's, naming them
    all when there were several."""
    if not isinstance(last, ProviderError) or len(failures) < 2:
        raise last
    raise ProviderError(f"every model failed: {'; '.join(failures)}",
                        provider=last.provider, status_code=last.status_code,
                        retryable=last.retryable, request=last.request) from last
