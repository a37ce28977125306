"""A provider's connection pool: sized by ``limits``, and how long calls wait for it is told."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bloge import AgentBuilder, LlmCalledPayload, LlmChatOperator, OperatorRegistry
from bloge.core import BlogeUsageError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.pool_wait import measuring_pool_wait
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from tests.llm.providers.wire_payloads import json_response, openai_completion
from tests.local_server import LocalServer

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))


def answer(request: httpx.Request) -> httpx.Response:
    return json_response(200, openai_completion("Hello"))


async def waited_for_a_connection(provider: OpenAIChatProvider) -> float:
    with measuring_pool_wait() as waited:
        await provider.chat(REQUEST)
    return waited.seconds


async def test_calls_beyond_max_connections_wait_for_a_connection_and_say_how_long() -> None:
    with LocalServer(answer) as server:
        async with OpenAIChatProvider(base_url=server.url("/v1"), api_key="sk-test",
                                      limits=httpx.Limits(max_connections=1)) as provider:
            waits = await asyncio.gather(*(waited_for_a_connection(provider) for _ in range(2)))
    assert server.opened == 1
    assert max(waits) > 0


async def test_without_limits_concurrent_calls_open_their_own_connections() -> None:
    with LocalServer(answer) as server:
        async with OpenAIChatProvider(base_url=server.url("/v1"), api_key="sk-test") as provider:
            await asyncio.gather(*(provider.chat(REQUEST) for _ in range(2)))
    assert server.opened == 2


def test_limits_and_an_injected_client_are_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="pass limits to it instead"):
        AnthropicProvider(api_key="sk-ant", http_client=httpx.AsyncClient(),
                          limits=httpx.Limits(max_connections=1))


class Payloads:
    def __init__(self) -> None:
        self.seen: list[LlmCalledPayload] = []

    def on_agent_llm_called(self, context: object, payload: LlmCalledPayload) -> None:
        self.seen.append(payload)


async def test_a_model_call_that_waited_for_a_connection_says_so_to_the_listeners() -> None:
    payloads = Payloads()
    with LocalServer(answer) as server:
        async with OpenAIChatProvider(base_url=server.url("/v1"), api_key="sk-test",
                                      limits=httpx.Limits(max_connections=1)) as provider:
            registry = OperatorRegistry().register("llmChat", LlmChatOperator(provider))
            agent = (AgentBuilder.create("a", registry=registry).model("gpt-4o")
                     .to_operator("a", listeners=[payloads]))
            await asyncio.gather(agent.aexecute("Hi"), agent.aexecute("Hello"))
    assert len(payloads.seen) == 2
    assert max(p.pool_wait_ms for p in payloads.seen) > 0
    assert all(p.pool_wait_ms <= p.latency_ms for p in payloads.seen)
