"""A run reached through ``/mcp`` that pauses for approval, or for posted tool results, is
the tool's error saying so, naming the run and where it is decided — not a server error."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")

import httpx
import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bloge import Agent
from bloge.llm import ScriptedProvider, ToolDefinition
from bloge.server import ServerConfig, create_app
from bloge.store import RunStatus, Store, open_store
from tests.runtime.helpers import calls
from tests.server.live_server import LiveServer


def transfer(amount: int) -> str:
    """Send money."""
    return f"sent {amount}"


transfer.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[LiveServer, Store]] = []

    def start(*answers: Any) -> tuple[LiveServer, Store]:
        store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
        agent = Agent(ScriptedProvider(*answers), [transfer, ToolDefinition("ask_user")],
                      name="payer")
        server = LiveServer(create_app([agent], store=store, config=ServerConfig(),
                                       mcp=True)).__enter__()
        started.append((server, store))
        return server, store

    yield start
    for server, store in started:
        server.stop()
        closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
        closing.start()
        closing.join()


async def call_payer(server: LiveServer) -> mcp_types.CallToolResult:
    async with httpx2.AsyncClient() as http, \
            Client(streamable_http_client(server.url("/mcp"), http_client=http),
                   cache=None) as mcp:
        return await mcp.call_tool("payer", {"message": "pay Ann"})


async def test_a_run_waiting_for_approval_is_the_tools_error_naming_where_to_decide(
        served: Any) -> None:
    server, store = served(calls(("transfer", {"amount": 500}, "call_a")), "done")
    result = await call_payer(server)
    [run] = await store.list_runs()
    assert run.status is RunStatus.AWAITING_APPROVAL
    assert result.is_error
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    text = block.text
    assert f"run {run.id} has not finished" in text
    assert "approval of transfer (call_a)" in text
    assert f"POST /runs/{run.id}/approvals/{{call_id}}" in text
    assert f"bloge approvals approve {run.id} <call_id>" in text
    # What it names is what decides it: the run continues and answers.
    decided = await asyncio.to_thread(httpx.post, server.url(f"/runs/{run.id}/approvals/call_a"),
                                      json={"approve": True}, timeout=30)
    assert decided.status_code == 200, decided.text


async def test_a_run_waiting_for_tool_results_is_the_tools_error_naming_the_endpoint(
        served: Any) -> None:
    server, store = served(calls(("ask_user", {"q": "which Ann?"}, "call_q")), "done")
    result = await call_payer(server)
    [run] = await store.list_runs()
    assert run.status is RunStatus.AWAITING_TOOL_RESULTS
    assert result.is_error
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert "the results of ask_user (call_q)" in block.text
    assert f"POST /runs/{run.id}/tool-results" in block.text
    assert "approvals" not in block.text
