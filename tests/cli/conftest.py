"""The ``bloge`` command through its real console script, in projects made in tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A copy of the repository's application (settings, examples)."""
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path
