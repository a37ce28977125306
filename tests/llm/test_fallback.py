"""Fallback models against fake upstreams over real HTTP on 127.0.0.1: an OpenAI-compatible
server that fails in each way, and an Anthropic one that answers.

A call fails over on 429, 5xx, 529, timeouts and refused connections; never on a 400, and
never once a stream has delivered its first token.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from bloge.core import ProviderError
from bloge.core.context import OperatorContext
from bloge.llm import LlmChatOperator, LlmMessage, LlmRequest, LlmStreamingChatOperator
from bloge.llm.breaker import CircuitBreaker
from bloge.llm.fallback import fails_over
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider, RetryPolicy
from bloge.llm.providers.retry import Sleep
from bloge.llm.routing import ModelRouter
from bloge.llm.types import LlmChunk, LlmResponse
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.llm.providers.wire_payloads import (
    anthropic_error,
    anthropic_events,
    anthropic_message,
    anthropic_sse,
    openai_error,
    openai_sse,
    openai_stream,
    text_block,
)
from tests.local_server import LocalServer

ONCE = RetryPolicy(max_attempts=1)
REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),), fallback=("claude-sonnet-4-5",))
CTX = OperatorContext.root()
SSE = {"content-type": "text/event-stream"}


class Upstream:
    """A handler that answers every request with ``reply`` and counts them."""

    def __init__(self, reply: Callable[[httpx.Request], httpx.Response]) -> None:
        self.reply = reply
        self.calls = 0
        self.release = threading.Event()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        return self.reply(request)


def status(code: int, body: object) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(code, json=body)


def claude_answers(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content).get("stream"):
        return httpx.Response(200, headers=SSE, content=anthropic_sse(anthropic_events(["Hi!"])))
    return httpx.Response(200, json=anthropic_message([text_block("Hi from Claude")]))


@contextmanager
def upstreams(openai: Upstream, *, timeout: float = 5.0, openai_url: str | None = None,
              retry: RetryPolicy = ONCE, sleep: Sleep = asyncio.sleep,
              ) -> Iterator[tuple[ModelRouter, Upstream]]:
    claude = Upstream(claude_answers)
    with LocalServer(openai) as primary, LocalServer(claude) as secondary:
        router = ModelRouter({
            "gpt-*": OpenAIChatProvider(base_url=openai_url or primary.url("/v1"),
                                        api_key=OPENAI_KEY, retry=retry, timeout=timeout,
                                        sleep=sleep),
            "claude-*": AnthropicProvider(base_url=secondary.url(), api_key=ANTHROPIC_KEY,
                                          retry=ONCE),
        })
        try:
            yield router, claude
        finally:
            openai.release.set()


async def chat(router: ModelRouter, breaker: CircuitBreaker | None = None,
               request: LlmRequest = REQUEST) -> LlmResponse:
    try:
        return await LlmChatOperator(router, breaker=breaker).execute(request, CTX)
    finally:
        await router.aclose()


async def stream(router: ModelRouter) -> list[LlmChunk]:
    chunks = await LlmStreamingChatOperator(router).execute(REQUEST, CTX)
    try:
        return [chunk async for chunk in chunks]
    finally:
        await router.aclose()


@pytest.mark.parametrize(("code", "body"), [
    (429, openai_error("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded")),
    (429, openai_error("You exceeded your current quota", "insufficient_quota",
                       "insufficient_quota")),
    (500, openai_error("The server had an error", "server_error")),
    (503, openai_error("The engine is currently overloaded", "server_error")),
    (529, anthropic_error("overloaded_error", "Overloaded")),
])
async def test_a_failing_status_fails_over_to_the_next_model(code: int, body: object) -> None:
    openai = Upstream(status(code, body))
    with upstreams(openai) as (router, claude):
        response = await chat(router)
    assert response.content == "Hi from Claude"
    assert (response.model, response.fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert (openai.calls, claude.calls) == (1, 1)


async def test_a_rate_limit_asking_a_wait_past_the_cap_fails_over_without_waiting() -> None:
    limited = openai_error("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded")
    openai = Upstream(lambda request: httpx.Response(429, headers={"retry-after": "120"},
                                                     json=limited))
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    with upstreams(openai, retry=RetryPolicy(), sleep=sleep) as (router, claude):
        response = await chat(router)
    assert (response.model, response.fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert (openai.calls, claude.calls, slept) == (1, 1, [])


async def test_a_timeout_fails_over_to_the_next_model() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        openai.release.wait()  # until the test ends: the provider's timeout cuts it short
        return httpx.Response(500)

    openai = Upstream(hang)
    with upstreams(openai, timeout=0.2) as (router, claude):
        response = await chat(router)
    assert (response.model, response.fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert claude.calls == 1


async def test_a_refused_connection_fails_over_to_the_next_model() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    openai = Upstream(status(200, {}))
    with upstreams(openai, openai_url=f"http://127.0.0.1:{port}/v1") as (router, claude):
        response = await chat(router)
    assert (response.model, response.fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert claude.calls == 1


async def test_a_bad_request_fails_the_call_without_failing_over() -> None:
    openai = Upstream(status(400, openai_error("Invalid 'messages'", "invalid_request_error")))
    with upstreams(openai) as (router, claude), pytest.raises(ProviderError) as caught:
        await chat(router)
    assert caught.value.status_code == 400
    assert claude.calls == 0


async def test_when_every_model_fails_the_error_names_each_failure() -> None:
    openai = Upstream(status(503, openai_error("overloaded", "server_error")))
    request = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),), fallback=("gpt-4o-mini",))
    with upstreams(openai) as (router, _), pytest.raises(ProviderError) as caught:
        await chat(router, request=request)
    assert "every model failed: gpt-4o: " in str(caught.value)
    assert "; gpt-4o-mini: " in str(caught.value)
    assert openai.calls == 2


async def test_a_stream_that_fails_before_its_first_token_fails_over() -> None:
    openai = Upstream(status(529, anthropic_error("overloaded_error", "Overloaded")))
    with upstreams(openai) as (router, claude):
        chunks = await stream(router)
    assert "".join(chunk.content for chunk in chunks) == "Hi!"
    assert (chunks[-1].model, chunks[-1].fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert claude.calls == 1


async def test_a_stream_that_fails_after_its_first_token_does_not_fail_over() -> None:
    # An in-stream error that would fail over before the first token (the server says it
    # may succeed later): after it, part of the answer has reached the caller.
    body = openai_sse([*openai_stream(["Hel"])[:2],
                       {"error": {"message": "overloaded", "type": "server_error"}}], done=False)
    openai = Upstream(lambda request: httpx.Response(200, headers=SSE, content=body))
    seen: list[str] = []

    async def read(chunks: AsyncIterator[LlmChunk]) -> None:
        async for chunk in chunks:
            seen.append(chunk.content)  # noqa: PERF401 -- kept one by one: the stream fails

    with upstreams(openai) as (router, claude):
        chunks = await LlmStreamingChatOperator(router).execute(REQUEST, CTX)
        with pytest.raises(ProviderError, match="overloaded"):
            await read(chunks)
        await router.aclose()
    assert seen == ["Hel"]
    assert claude.calls == 0


async def test_an_open_breaker_skips_its_model_until_the_cooldown_ends() -> None:
    now = [1000.0]
    breaker = CircuitBreaker(failures=2, cooldown=30.0, clock=lambda: now[0])
    openai = Upstream(status(503, openai_error("overloaded", "server_error")))
    with upstreams(openai) as (router, claude):
        operator = LlmChatOperator(router, breaker=breaker)
        for _ in range(2):
            await operator.execute(REQUEST, CTX)
        assert openai.calls == 2
        skipped = await operator.execute(REQUEST, CTX)
        assert openai.calls == 2  # the breaker is open: gpt-4o is not asked
        assert skipped.fallback_from == ("gpt-4o",)
        now[0] += 30.0
        openai.reply = status(200, {"choices": [{"message": {"content": "back"}}]})
        recovered = await operator.execute(REQUEST, CTX)
        await router.aclose()
    assert (recovered.content, recovered.model, recovered.fallback_from) == (
        "back", "gpt-4o", ())
    assert openai.calls == 3
    assert claude.calls == 3


async def test_a_breaker_closed_by_a_success_counts_failures_from_zero() -> None:
    breaker = CircuitBreaker(failures=2, cooldown=30.0)
    route = "openai@127.0.0.1:gpt-4o"
    assert not await breaker.failed(route)
    await breaker.succeeded(route, await breaker.state(route))
    assert not await breaker.failed(route)
    assert await breaker.failed(route)
    assert breaker.open_for(await breaker.state(route)) > 0


def test_servers_on_two_ports_of_one_host_have_breakers_of_their_own() -> None:
    routes = {OpenAIChatProvider(base_url=f"http://127.0.0.1:{port}/v1",
                                 api_key=OPENAI_KEY).route("local") for port in (8001, 8002)}
    assert routes == {"openai@127.0.0.1:8001:local", "openai@127.0.0.1:8002:local"}


async def test_when_every_breaker_is_open_the_models_are_asked_anyway() -> None:
    breaker = CircuitBreaker(failures=1, cooldown=30.0)
    openai = Upstream(status(503, openai_error("overloaded", "server_error")))
    with upstreams(openai) as (router, claude):
        await breaker.failed(router.route("gpt-4o"))
        await breaker.failed(router.route("claude-sonnet-4-5"))
        response = await chat(router, breaker)
    assert response.model == "claude-sonnet-4-5"
    assert (openai.calls, claude.calls) == (1, 1)


@pytest.mark.parametrize(("error", "expected"), [
    (ProviderError("Your credit balance is too low to access the Anthropic API",
                   provider="anthropic", status_code=400), True),
    (ProviderError("Payment required", provider="openai", status_code=402), True),
    (ProviderError("Request timeout", provider="openai", status_code=408), True),
    (ProviderError("timed out after 60 s", provider="openai", retryable=True), True),
    (TimeoutError(), True),
    (ConnectionRefusedError(), True),
    (ProviderError("Invalid API key", provider="openai", status_code=401), False),
    (ProviderError("model not found", provider="openai", status_code=404), False),
    (ProviderError("prompt is too long", provider="anthropic", status_code=413), False),
    (ProviderError("the response has no choices", provider="openai"), False),
    (ValueError("a bug"), False),
])
def test_which_failures_fail_over(error: Exception, expected: bool) -> None:
    assert fails_over(error) is expected


async def test_a_model_with_a_fallback_is_retried_once_then_the_fallback_answers() -> None:
    openai = Upstream(status(429, openai_error("Rate limit reached", "requests")))
    claude = Upstream(claude_answers)
    with LocalServer(openai) as primary, LocalServer(claude) as secondary:
        retrying = RetryPolicy(max_attempts=4, initial_backoff=0.0, jitter=False)
        router = ModelRouter({
            "gpt-*": OpenAIChatProvider(base_url=primary.url("/v1"), api_key=OPENAI_KEY,
                                        retry=retrying),
            "claude-*": AnthropicProvider(base_url=secondary.url(), api_key=ANTHROPIC_KEY,
                                          retry=retrying),
        })
        response = await chat(router)
    assert response.model == "claude-sonnet-4-5"
    assert openai.calls == 2  # one retry of the policy's three, then the fallback
