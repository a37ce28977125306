"""The ``bloge`` command through its real console script, in projects made in tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BLOGE = Path(sys.executable).with_name("bloge")


def environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without bloge's or the vendors' variables, plus ``env``."""
    vendor = ("OPENAI_", "ANTHROPIC_")
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("BLOGE_", *vendor))}
    return {**clean, **(env or {})}


def bloge(*args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, env=environment(env), check=False, timeout=60)


def started(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``bloge`` started, not waited for: no stdin, its output piped."""
    return subprocess.Popen([str(BLOGE), *args], cwd=cwd, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=environment(env))


def write_project(folder: Path, *, agents: str, operators: Mapping[str, str],
                  source: str) -> Path:
    """A project of its own in ``folder``: ``agents`` (DSL text) in ``agents.bloge``, and
    ``operators`` (operator name → function name) the functions of ``source``, a module of
    the project's (``project_operators.py``)."""
    (folder / "project_operators.py").write_text(source, encoding="utf-8")
    (folder / "agents.bloge").write_text(agents, encoding="utf-8")
    settings = ["bloge:", '  agents: {dsl-locations: ["*.bloge"]}', "  operators:",
                *(f'    {name}: "project_operators:{function}"'
                  for name, function in operators.items())]
    (folder / "settings.yaml").write_text("\n".join(settings) + "\n", encoding="utf-8")
    return folder


def waiting_agent(name: str, operator: str, *, streaming: bool = False) -> str:
    """The DSL of agent ``name`` (a ``stream agent`` if ``streaming``) whose one tool,
    ``waitForAnswer``, is operator ``operator``."""
    return f"""
{"stream " if streaming else ""}agent {name} {{
  model = "gpt-4o"
  tool waitForAnswer : {operator} {{
    description = "Wait for the answer"
    input {{ question = tool_args.question }}
  }}
}}
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A copy of the repository's application (settings, examples)."""
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path
