"""The ``bloge`` command, through its real console-script entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BLOGE = Path(sys.executable).with_name("bloge")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_check_accepts_the_example_agents(fixtures: Path) -> None:
    result = run("check", str(fixtures / "agent-customer-support.bloge"),
                 str(fixtures / "streaming-analysis-agent.bloge"))
    assert result.returncode == 0, result.stderr
    assert "agent customerSupport" in result.stdout
    assert "agent dataAnalyst" in result.stdout


def test_check_reports_every_error_with_its_location_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bloge"
    bad.write_text('agent a {\n  max_turn = 1\n}\n', encoding="utf-8")
    result = run("check", str(bad))
    assert result.returncode == 2
    assert f"{bad}:2:3: unknown keyword 'max_turn' in agent 'a'; did you mean 'max_turns'?" in result.stderr
    assert f"{bad}:1:7: agent 'a' has no model" in result.stderr
    assert "Traceback" not in result.stderr
