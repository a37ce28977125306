"""``/mcp`` on the application ``bloge serve`` runs (a real uvicorn on 127.0.0.1), called by
the MCP SDK's own client: every agent a tool, behind the server's API keys and Host/Origin
checks."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from bloge.mcp import McpServers, McpServerSpec
from bloge_container import close_container, create_container
from bloge_container.serving import server_app
from tests.cli.conftest import REPO
from tests.server.live_server import LiveServer

KEY = "test-mcp-key"
QUESTION = "How do I reset my password?"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The repository's application served with an API key; the ``/mcp`` URL."""
    project = tmp_path_factory.mktemp("app")
    shutil.copy(REPO / "settings.yaml", project / "settings.yaml")
    shutil.copytree(REPO / "examples", project / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (project / "settings.keyed.yaml").write_text(
        f'bloge:\n  server:\n    api-keys: ["{KEY}"]\n', encoding="utf-8")
    container = create_container(settings_file=project / "settings.yaml", profile="keyed")
    with LiveServer(server_app(container)) as server:
        yield server.url("/mcp")
    asyncio.run(close_container(container))


@contextlib.asynccontextmanager
async def client(url: str, *, key: str = KEY) -> AsyncIterator[Client]:
    """The SDK's client, sending the API key."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http, \
            Client(streamable_http_client(url, http_client=http), cache=None) as mcp:
        yield mcp


async def test_every_agent_is_a_tool_taking_the_users_message(url: str) -> None:
    async with client(url) as mcp:
        listed = (await mcp.list_tools()).tools

    names = [tool.name for tool in listed]
    assert "customerSupport" in names
    support = listed[names.index("customerSupport")]
    assert support.input_schema["required"] == ["message"]
    assert "searchKnowledgeBase" in (support.description or "")


async def test_the_sdks_client_gets_an_agents_answer(url: str) -> None:
    async with client(url) as mcp:
        result = await mcp.call_tool("customerSupport", {"message": QUESTION})

    assert not result.is_error
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert block.text.startswith("KB-RESET-001")


async def test_an_unknown_agent_is_an_error_with_a_suggestion(url: str) -> None:
    async with client(url) as mcp:
        with pytest.raises(MCPError, match="no agent 'customerSuport'; did you mean "
                           "'customerSupport'"):
            await mcp.call_tool("customerSuport", {"message": QUESTION})


async def test_an_empty_message_is_the_tools_error(url: str) -> None:
    async with client(url) as mcp:
        result = await mcp.call_tool("customerSupport", {"message": " "})

    assert result.is_error


def test_the_endpoint_needs_the_api_key(url: str) -> None:
    response = httpx.post(url, json=INITIALIZE, headers=HEADERS)

    assert response.status_code == 401


def test_the_endpoint_keeps_no_session(url: str) -> None:
    response = httpx.post(url, json=INITIALIZE,
                          headers={**HEADERS, "Authorization": f"Bearer {KEY}"})

    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert response.json()["result"]["serverInfo"]["name"] == "bloge"


def test_get_offers_no_stream_and_says_so(url: str) -> None:
    # before: a 200 event stream that never sent anything, open until the client gave up
    response = httpx.get(url, headers={"Accept": "text/event-stream",
                                       "Authorization": f"Bearer {KEY}"}, timeout=10)

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["message"] == (
        "GET /mcp: this stateless MCP endpoint sends no server-initiated messages, so it "
        "offers no SSE stream; send JSON-RPC requests with POST /mcp")


def test_delete_has_no_session_to_end(url: str) -> None:
    response = httpx.delete(url, headers={"Authorization": f"Bearer {KEY}"})

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert "keeps no session" in response.json()["error"]["message"]


def test_a_rebound_host_is_refused(url: str) -> None:
    response = httpx.post(url, json=INITIALIZE, headers={
        **HEADERS, "Authorization": f"Bearer {KEY}", "Host": "attacker.example"})

    assert response.status_code == 400
    assert "attacker.example" in response.text


def test_a_foreign_origin_is_refused(url: str) -> None:
    response = httpx.post(url, json=INITIALIZE, headers={
        **HEADERS, "Authorization": f"Bearer {KEY}", "Origin": "http://attacker.example"})

    assert response.status_code == 403


def test_the_sdk_is_pinned_to_its_2x_api() -> None:
    assert importlib.metadata.version("mcp").startswith("2.")
    assert Path(REPO / "pyproject.toml").read_text(encoding="utf-8").count('"mcp>=2,<3"') == 2


def test_the_mcp_client_uses_the_agents_of_another_bloge_over_http(url: str) -> None:
    servers = McpServers([McpServerSpec("remote", transport="http", url=url,
                                        headers={"Authorization": f"Bearer {KEY}"})])
    try:
        answer = asyncio.run(servers.operators()["remote.customerSupport"].aexecute(
            {"message": QUESTION}))
    finally:
        servers.close()

    assert answer.startswith("KB-RESET-001")


def test_a_refused_key_is_an_error_naming_the_server_without_the_key(url: str) -> None:
    servers = McpServers([McpServerSpec("remote", transport="http", url=url,
                                        headers={"Authorization": "Bearer wrong-key-123"})])
    servers.close()

    error = str(servers.outcomes["remote"].error)
    assert error.startswith("MCP server 'remote': ")
    assert error.endswith(", HTTP 401)")
    assert "wrong-key-123" not in error
