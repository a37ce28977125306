"""examples/a2a as a user runs it: the research agent served by ``bloge serve`` in one process,
the assistant of another project asking it over A2A, both on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("a2a", reason="A2A needs the extra: pip install 'bloge[a2a]'")

from tests.cli.conftest import bloge
from tests.server.test_serve_command import serving

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "a2a"
#: The address the example's assistant asks (its research service's settings say 9000).
EXAMPLE_URL = "http://127.0.0.1:9000"
KEY = "rk-example-secret"


def projects(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the two projects of the example."""
    ignore = shutil.ignore_patterns("__pycache__", "var")
    research = shutil.copytree(EXAMPLE / "research", tmp_path / "research", ignore=ignore)
    assistant = shutil.copytree(EXAMPLE / "assistant", tmp_path / "assistant", ignore=ignore)
    return research, assistant


def point_at(assistant: Path, url: str) -> None:
    """The assistant's project asks the research service at ``url`` (the port it got)."""
    for name in ("assistant.bloge", "settings.yaml"):
        path = assistant / name
        path.write_text(path.read_text().replace(EXAMPLE_URL, url))


def test_the_assistant_asks_the_research_agent_of_another_process(tmp_path: Path) -> None:
    research, assistant = projects(tmp_path)
    with serving(research) as url:
        point_at(assistant, url)
        asked = bloge("run", "assistant", "research the history of tea", "--json",
                      cwd=assistant)
    assert asked.returncode == 0, asked.stderr
    output = json.loads(asked.stdout)
    assert "Tea was first drunk in China" in output["content"]


def test_with_keys_the_assistant_sends_the_key_of_its_settings(tmp_path: Path) -> None:
    research, assistant = projects(tmp_path)
    keys = {"BLOGE_SERVER__API_KEYS": json.dumps([KEY])}
    with serving(research, env=keys) as url:
        point_at(assistant, url)
        refused = bloge("run", "assistant", "research the history of tea", cwd=assistant)
        asked = bloge("run", "assistant", "research the history of tea", cwd=assistant,
                      env={"RESEARCH_API_KEY": KEY})
    assert f"the A2A agent at {url}/agents/research answered HTTP 401" in refused.stdout
    assert KEY not in refused.stdout + refused.stderr + asked.stdout + asked.stderr
    assert "Tea was first drunk in China" in asked.stdout


def test_the_conditions_report_lists_the_remote_agent(tmp_path: Path) -> None:
    _, assistant = projects(tmp_path)
    shown = bloge("config", cwd=assistant)
    assert shown.returncode == 0, shown.stderr
    assert ("RemoteAgent[assistant.research]: registered, A2A agent at "
            f"{EXAMPLE_URL}/agents/research") in shown.stdout
