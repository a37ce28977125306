"""stdio both ways, with the repository's application: ``bloge mcp serve --stdio`` called by
the SDK's client, and the support agent searching the knowledge base's MCP server of
``examples/support`` (``KB_OVER_MCP=true``)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import mcp_types
import pytest
from mcp import Client, StdioServerParameters

from bloge_container import close_container, create_container
from tests.cli.conftest import BLOGE, bloge, environment
from tests.cli.fake_openai import fake_openai
from tests.llm.providers.wire_payloads import openai_error

QUESTION = "How do I reset my password?"


async def test_bloge_mcp_serve_answers_the_sdks_client_over_stdio(app: Path) -> None:
    server = StdioServerParameters(command=str(BLOGE), args=["mcp", "serve", "--stdio"],
                                   cwd=app, env=environment())
    async with Client(server, cache=None) as mcp:
        names = [tool.name for tool in (await mcp.list_tools()).tools]
        result = await mcp.call_tool("customerSupport", {"message": QUESTION})

    assert "customerSupport" in names
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert block.text.startswith("KB-RESET-001")


def test_the_support_agent_searches_the_knowledge_base_over_mcp(
        app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_OVER_MCP", "true")
    container = create_container(settings_file=app / "settings.yaml")
    try:
        search = container.operator_registry().get("KBSearchOperator")
        output = asyncio.run(container.agents()["customerSupport"].operator.aexecute(QUESTION))
    finally:
        asyncio.run(close_container(container))

    assert repr(search) == "<McpToolOperator kb.search>"
    assert output.content.startswith("KB-RESET-001")


def test_bloge_mcp_serve_wants_stdio(app: Path) -> None:
    result = bloge("mcp", "serve", cwd=app)

    assert result.returncode == 2
    assert "bloge mcp serve speaks stdio: pass --stdio" in result.stderr


async def test_a_failed_run_is_the_tools_error_naming_the_run_without_the_key(
        app: Path) -> None:
    key = "sk-do-not-show-me"
    rejected = openai_error(f"Incorrect API key provided: {key}", "invalid_request_error")
    with fake_openai(401, rejected) as fake:
        server = StdioServerParameters(
            command=str(BLOGE), args=["mcp", "serve", "--stdio"], cwd=app,
            env=environment({"BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": fake.base_url,
                             "OPENAI_API_KEY": key}))
        async with Client(server, cache=None) as mcp:
            result = await mcp.call_tool("customerSupport", {"message": QUESTION})

    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert result.is_error
    assert re.fullmatch(r"run \w+ failed: agent 'customerSupport' failed .*HTTP 401.*", block.text)
    assert key not in block.text
