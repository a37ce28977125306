"""HTTP providers used from several event loops — ``asyncio.run()`` twice, threads with loops
of their own — against a real server on 127.0.0.1, so that real pooled connections (which
belong to the loop that opened them) are at stake."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from bloge import LlmChatOperator, OperatorContext, ProviderError
from bloge.llm import LlmMessage, LlmRequest
from tests.llm.providers.local_providers import PROVIDERS, Provider, openai, provider_served
from tests.llm.providers.support_servers import OpenAISupportServer
from tests.local_server import LocalServer

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("How do I reset my password?"),), None)


@pytest.fixture(params=PROVIDERS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[LocalServer, Provider]]:
    with provider_served(*request.param) as both:
        yield both


def chat_once(provider: Provider) -> str:
    """One model call in an event loop of its own, as user code may write it."""
    operator = LlmChatOperator(provider)  # type: ignore[arg-type]  # an Provider is one
    response = asyncio.run(operator.execute(REQUEST, OperatorContext.root()))
    return response.tool_calls[0].name


def test_asyncio_run_twice_with_one_provider_works(
    served: tuple[LocalServer, Provider],
) -> None:
    _, provider = served
    assert [chat_once(provider) for _ in range(3)] == ["searchKnowledgeBase"] * 3


def test_each_event_loop_closes_its_connections_when_it_shuts_down(
    served: tuple[LocalServer, Provider],
) -> None:
    server, provider = served
    chat_once(provider)
    chat_once(provider)
    assert server.wait_until_closed(2) == server.opened == 2


def test_threads_with_loops_of_their_own_share_one_provider(
    served: tuple[LocalServer, Provider],
) -> None:
    _, provider = served
    with ThreadPoolExecutor(4) as threads:
        names = list(threads.map(lambda _: chat_once(provider), range(8)))
    assert names == ["searchKnowledgeBase"] * 8


async def test_calls_in_one_loop_reuse_one_connection(
    served: tuple[LocalServer, Provider],
) -> None:
    server, provider = served
    for _ in range(3):
        await provider.chat(REQUEST)
    assert server.opened == 1


def test_aclose_closes_the_connections_the_provider_opened(
    served: tuple[LocalServer, Provider],
) -> None:
    server, provider = served

    async def chat_then_close() -> None:
        await provider.chat(REQUEST)
        await provider.aclose()
        # Checked before this loop shuts down, which would close the connection anyway.
        assert await asyncio.to_thread(server.wait_until_closed, 1) == 1

    asyncio.run(chat_then_close())


def test_an_injected_client_used_after_its_loop_closed_is_a_clear_provider_error() -> None:
    with LocalServer(OpenAISupportServer()) as server:
        client = httpx.AsyncClient()
        provider = openai(server, client)
        chat_once(provider)
        with pytest.raises(ProviderError, match="injected http_client belongs to the event loop"):
            chat_once(provider)
        asyncio.run(client.aclose())
    del client, provider
    with warnings.catch_warnings():
        # The connection of the closed loop can no longer be closed properly: the very
        # problem this test is about. Collect it here rather than in some later test.
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
