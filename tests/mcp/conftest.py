"""MCP servers for the tests: ``stdio_server.py`` (the SDK's low-level server) over stdio,
started with the Python running the tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'bloge[mcp]'")

from bloge.mcp import McpServers, McpServerSpec
from tests.cli.conftest import app  # noqa: F401 -- the repository's application, a fixture

SERVER = Path(__file__).with_name("stdio_server.py")


def spec(name: str = "docs", mode: str = "ok", **options: Any) -> McpServerSpec:
    """The test server in ``mode``, as the MCP server ``name``."""
    return McpServerSpec(name, command=sys.executable, args=(str(SERVER), mode), **options)


@pytest.fixture(scope="module")
def docs() -> Iterator[McpServers]:
    """The test server as ``docs``, started once for a module's tests that do not stop it."""
    servers = McpServers([spec(mode="bad-schema")])
    yield servers
    servers.close()


@pytest.fixture
def fresh() -> Iterator[list[McpServers]]:
    """Servers a test starts (``fresh.append(McpServers(...))``), stopped after it."""
    started: list[McpServers] = []
    yield started
    for servers in started:
        servers.close()
