"""``bloge.mcp.servers`` through the application: check, config, and servers that fail."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bloge_container import close_container, create_container
from bloge_container.errors import ConfigurationError
from tests.cli.conftest import bloge
from tests.mcp.conftest import SERVER

AGENT = """
agent helper {
  model = "gpt-4o"
  tool search : %s { input { query = tool_args.query } }
}
"""


def project(tmp_path: Path, *, tool: str = "docs.search", docs: str = "ok",
            web_required: bool = False) -> Path:
    settings = {"bloge": {
        "agents": {"dsl-locations": ["*.bloge"]},
        "store": {"enabled": False},
        "mcp": {"servers": {
            "docs": {"command": "python", "args": [str(SERVER), docs],
                     "startup-timeout": "30s"},
            # Nothing listens on port 9: this server never starts.
            "web": {"transport": "http", "url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Bearer sekrit-header"},
                    "required": web_required},
        }},
    }}
    (tmp_path / "settings.yaml").write_text(json.dumps(settings), encoding="utf-8")
    (tmp_path / "agent.bloge").write_text(AGENT % tool, encoding="utf-8")
    return tmp_path


def test_check_names_the_closest_listed_tool(tmp_path: Path) -> None:
    result = bloge("check", cwd=project(tmp_path, tool="docs.serch"))

    assert result.returncode == 2
    assert ("tool 'search' refers to operator 'docs.serch', which is not in the registry; "
            "did you mean 'docs.search'?") in result.stderr


def test_config_reports_each_server_its_tools_and_hides_header_values(tmp_path: Path) -> None:
    result = bloge("config", cwd=project(tmp_path, docs="bad-schema"))

    assert result.returncode == 0, result.stderr
    assert "+ McpServer[docs]: registered, bloge.mcp.servers.docs over stdio (" in result.stdout
    assert "tools docs.search, docs.fail, docs.huge, docs.crash, docs.secret, docs.hang" in \
        result.stdout
    assert ("- McpTool[docs/broken]: not registered, bloge.mcp.servers.docs lists it, but its "
            "input schema is invalid at properties/q/type") in result.stdout
    assert ("- McpServer[web]: not registered, MCP server 'web': cannot reach "
            "http://127.0.0.1:9/mcp") in result.stdout
    assert 'bloge.mcp.servers.web.headers.Authorization = "****"' in result.stdout
    assert "sekrit-header" not in result.stdout + result.stderr


def test_a_required_server_that_cannot_start_stops_the_application_naming_it(
        tmp_path: Path) -> None:
    container = create_container(project_dir=project(tmp_path, web_required=True),
                                 settings_file=tmp_path / "settings.yaml")

    with pytest.raises(ConfigurationError, match=r"^bloge.mcp.servers.web: MCP server 'web': "
                       r"cannot reach http://127.0.0.1:9/mcp: .*; set "
                       r"bloge.mcp.servers.web.required to false to start without it$"):
        container.agents()


def test_an_optional_server_that_cannot_start_leaves_the_agents_running(
        tmp_path: Path) -> None:
    container = create_container(project_dir=project(tmp_path),
                                 settings_file=tmp_path / "settings.yaml")
    try:
        agent = container.agents()["helper"]
        output = asyncio.run(agent.operator.aexecute("search the docs for reset"))
    finally:
        asyncio.run(close_container(container))

    assert [result["articleId"] for result in output.tool_results.values()] == ["KB-1"]


def test_servers_stop_with_the_application(tmp_path: Path) -> None:
    container = create_container(project_dir=project(tmp_path),
                                 settings_file=tmp_path / "settings.yaml")
    container.agents()
    connection = container.mcp_servers().connection("docs")

    asyncio.run(close_container(container))

    assert connection.state == "closed"
