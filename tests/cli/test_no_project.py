"""``bloge`` outside a project says so: no settings.yaml here (or the one above to use), and
what to do; ``/mcp`` without the extra ``[mcp]`` says which extra, in the server's answer and
in ``bloge config``."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from pathlib import Path

import httpx
import pytest

from bloge_container import close_container, create_container
from bloge_container.serving import server_app
from tests.cli.conftest import bloge, environment
from tests.server.live_server import LiveServer

NOT_INSTALLED = "the MCP SDK is not installed: pip install 'bloge[mcp]'"


def test_run_outside_a_project_says_there_is_no_settings_file(tmp_path: Path) -> None:
    result = bloge("run", "customerSupport", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert f"no agent 'customerSupport': no settings.yaml in {tmp_path.resolve()}" in result.stderr
    assert "run bloge in your project's folder" in result.stderr
    assert "-c FILE" in result.stderr
    assert "agents: none" not in result.stderr


def test_run_in_a_subfolder_points_at_the_settings_file_above(app: Path) -> None:
    below = app / "examples"
    result = bloge("run", "customerSupport", "hi", cwd=below)
    assert result.returncode == 2
    assert f"no settings.yaml in {below.resolve()}" in result.stderr
    assert f"run bloge in {app.resolve()}, or name it with -c {app.resolve() / 'settings.yaml'}" \
        in result.stderr


def test_agents_and_check_outside_a_project_say_so_too(tmp_path: Path) -> None:
    agents = bloge("agents", cwd=tmp_path)
    assert f"no agents found: no settings.yaml in {tmp_path.resolve()}" in agents.stdout
    check = bloge("check", cwd=tmp_path)
    assert check.returncode == 2
    assert f"no DSL files: no settings.yaml in {tmp_path.resolve()}" in check.stderr


def test_a_project_without_agents_still_gets_the_dsl_locations_hint(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text("bloge: {}\n", encoding="utf-8")
    result = bloge("run", "customerSupport", "hi", cwd=tmp_path)
    assert "agents: none (check bloge.agents.dsl-locations)" in result.stderr


def _without_mcp(find_spec: Callable[..., ModuleSpec | None]) -> Callable[..., ModuleSpec | None]:
    def find(name: str, *args: object) -> ModuleSpec | None:
        return None if name == "mcp" else find_spec(name, *args)
    return find


def test_mcp_without_the_extra_answers_a_404_naming_it(
        app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", _without_mcp(importlib.util.find_spec))
    container = create_container(settings_file=app / "settings.yaml")
    with LiveServer(server_app(container)) as server:
        response = httpx.post(server.url("/mcp"), json={"jsonrpc": "2.0", "id": 1,
                                                        "method": "initialize"})
    asyncio.run(close_container(container))
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["message"] == f"/mcp is off: {NOT_INSTALLED}"
    assert error["code"] == "mcp_unavailable"
    condition = container.report().find("McpEndpoint[/mcp]")
    assert not condition.registered


def test_the_conditions_report_says_mcp_is_off_and_why(app: Path) -> None:
    hidden = ("import sys; sys.modules['mcp'] = None; sys.argv = ['bloge', 'config', '--json']; "
              "from bloge_container.cli import main; main()")
    result = subprocess.run([sys.executable, "-c", hidden], capture_output=True, text=True,
                            cwd=app, env=environment(), check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    conditions = {c["component"]: c for c in json.loads(result.stdout)["conditions"]}
    endpoint = conditions["McpEndpoint[/mcp]"]
    assert not endpoint["registered"]
    assert endpoint["reason"] == f"bloge serve answers 404: {NOT_INSTALLED}"


def test_the_conditions_report_says_mcp_is_on_with_the_extra(app: Path) -> None:
    result = bloge("config", "--json", cwd=app)
    conditions = {c["component"]: c for c in json.loads(result.stdout)["conditions"]}
    assert conditions["McpEndpoint[/mcp]"]["registered"]
