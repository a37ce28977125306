"""A served application over scripted models and a store, on a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pytest

from bloge import (
    AgentDef,
    AgentDslCompiler,
    AgentExecutionListener,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorRegistry,
    agent_operator,
)
from bloge.llm import LlmProvider
from bloge.server import Metrics, ServedAgents, ServerConfig, create_app
from bloge.server.agents import AgentOperator
from bloge.server.connections import uvicorn_options
from bloge.server.guard import Guard
from bloge.store import Store, open_store
from tests.cli.conftest import app  # noqa: F401 -- the repository's application, a fixture
from tests.server.browser import browser, page  # noqa: F401 -- the browser tests' fixtures
from tests.server.live_server import LiveServer

AGENTS = """
agent helper {
  model = "gpt-4o"
  system_prompt = "Be brief."
  max_turns = 4
  tool lookup : Lookup { description = "Look a word up" input { q = tool_args.q } }
}
agent other {
  model = "gpt-4o"
}
"""


def lookup(input: dict) -> dict:
    return {"found": input["q"].upper()}


@dataclass
class Served:
    """What a test needs of a running server."""

    server: LiveServer
    store: Store
    metrics: Metrics
    provider: LlmProvider
    listeners: list[AgentExecutionListener] = field(default_factory=list)

    def url(self, path: str = "") -> str:
        return self.server.url(path)


def served_app(provider: LlmProvider, store: Store, config: ServerConfig,
               metrics: Metrics | None = None,
               listeners: list[AgentExecutionListener] | None = None, *,
               mcp: bool = False, a2a: bool = False, a2a_off: str | None = None) -> Guard:
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(provider))
                .register("llmStreamingChat", LlmStreamingChatOperator(provider)).build())
    definitions = {d.id: d for d in AgentDslCompiler(registry).compile_all(AGENTS)}
    counted = metrics or Metrics()
    every = [counted, *(listeners or [])]

    def build(definition: AgentDef) -> AgentOperator:
        return agent_operator(definition.id, definition, registry, listeners=every, store=store)

    return create_app(ServedAgents(definitions, build, default="helper"), store=store,
                      config=config, metrics=counted, mcp=mcp, a2a=a2a, a2a_off=a2a_off)


Serve = Callable[..., Served]
"""``serve(provider, **config)``: a :class:`Served` application on a real server
(``uvicorn_grace``: how long uvicorn waits for open requests when it stops; ``mcp``: serve
``/mcp`` too; ``a2a``: serve the agents over A2A too, else ``a2a_off`` says why not)."""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """``serve(provider, **config)`` → a :class:`Served` on a real server, stopped after."""
    started: list[tuple[LiveServer, Store]] = []

    def start(provider: LlmProvider, *, listeners: list[AgentExecutionListener] | None = None,
              uvicorn_grace: float = 5.0, lease: float | None = None, mcp: bool = False,
              a2a: bool = False, a2a_off: str | None = None,
              **config: object) -> Served:
        url = f"sqlite:///{tmp_path / f'bloge-{len(started)}.db'}"
        store = open_store(url) if lease is None else open_store(url, lease=lease)
        metrics = Metrics()
        settings = ServerConfig(**config)  # type: ignore[arg-type]  # test keywords
        asgi = served_app(provider, store, settings, metrics, listeners, mcp=mcp, a2a=a2a,
                          a2a_off=a2a_off)
        # As bloge serve runs it: its connection deadlines and cap.
        server = LiveServer(asgi, timeout_graceful_shutdown=uvicorn_grace,
                            **uvicorn_options(settings)).__enter__()
        started.append((server, store))
        return Served(server, store, metrics, provider, listeners or [])

    yield start
    for server, store in started:
        server.stop()
        closed(store)


def closed(store: Store) -> None:
    """``store`` closed on a thread of its own: this one may be running an event loop
    (Playwright's sync API does, for the chat page's tests; an async test's does)."""
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A run store of this test's own (a SQLite file), for an application the test builds
    itself; closed when the test ends."""
    opened = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    yield opened
    closed(opened)


V1Client = Callable[..., openai.OpenAI]
"""``v1_client(url, **options)``: the official ``openai`` SDK's client of the ``/v1`` of the
server at ``url``, closed when the test ends (``options`` go to ``openai.OpenAI``)."""


@pytest.fixture
def v1_client() -> Iterator[V1Client]:
    """``v1_client(url, **options)`` → an ``openai.OpenAI`` on ``url + "/v1"``, closed as the
    test ends. Not left to the collector: a pooled connection that a collected client drops is
    a ResourceWarning in whichever later test the collector happens to run.

    Its key is ``none`` and it does not retry unless told (``api_key=``, ``max_retries=``): a
    test sees the server's first answer."""
    opened: list[openai.OpenAI] = []

    def open_client(url: str, *, api_key: str = "none", max_retries: int = 0,
                    **options: Any) -> openai.OpenAI:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=api_key, max_retries=max_retries,
                               **options)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()
