"""Each HTTP provider against its support server (``support_servers.py``) served for real on
127.0.0.1, for the tests about real pooled connections."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.llm.providers.support_servers import AnthropicSupportServer, OpenAISupportServer
from tests.local_server import Handler, LocalServer

Provider = OpenAIChatProvider | AnthropicProvider


def openai(server: LocalServer, client: httpx.AsyncClient | None = None) -> Provider:
    return OpenAIChatProvider(base_url=server.url("/v1"), api_key=OPENAI_KEY, http_client=client)


def anthropic(server: LocalServer, client: httpx.AsyncClient | None = None) -> Provider:
    return AnthropicProvider(base_url=server.url(), api_key=ANTHROPIC_KEY, http_client=client)


#: ``(make, model)`` of each provider, for a fixture's ``params``: see :func:`provider_served`.
PROVIDERS = [pytest.param((openai, OpenAISupportServer), id="openai"),
             pytest.param((anthropic, AnthropicSupportServer), id="anthropic")]


@contextmanager
def provider_served(make: Callable[[LocalServer], Provider],
                    model: Callable[[], Handler]) -> Iterator[tuple[LocalServer, Provider]]:
    """``model`` on a real local server, and the provider ``make`` points at it; the provider
    closed as the block ends."""
    with LocalServer(model()) as server:
        provider = make(server)
        yield server, provider
        asyncio.run(provider.aclose())
