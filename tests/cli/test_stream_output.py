"""``bloge run --stream``: stdout carries the answer only; tool lines and status go to stderr."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cli.conftest import REPO, bloge


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One streamed run of the data analyst (two turns, one tool call), shared by the tests."""
    app = tmp_path_factory.mktemp("app")
    shutil.copy(REPO / "settings.yaml", app / "settings.yaml")
    shutil.copytree(REPO / "examples", app / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    result = bloge("run", "dataAnalyst", "How is revenue trending this week?", "--stream",
                   cwd=app)
    assert result.returncode == 0, result.stderr
    return result


def test_stream_prints_only_the_models_text_on_stdout(
        streamed: subprocess.CompletedProcess[str]) -> None:
    assert "fetchMetrics" not in streamed.stdout
    assert "Revenue is up" in streamed.stdout


def test_stream_prints_a_line_per_tool_on_stderr(
        streamed: subprocess.CompletedProcess[str]) -> None:
    lines = streamed.stderr.splitlines()
    assert any(line.startswith("→ fetchMetrics (offline_1_") for line in lines)
    assert "✓ fetchMetrics" in lines


def test_stream_starts_each_turns_text_on_a_new_line(
        streamed: subprocess.CompletedProcess[str]) -> None:
    first, answer = streamed.stdout.splitlines()
    assert first == "Let me fetch time-series metrics by name."
    assert answer.startswith("Revenue is up")
