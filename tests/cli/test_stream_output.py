"""``bloge run --stream``: stdout carries the answer only; tool lines and status go to stderr."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import bloge


def test_stream_prints_only_the_answer_on_stdout(app: Path) -> None:
    result = bloge("run", "dataAnalyst", "How is revenue trending this week?", "--stream",
                   cwd=app)
    assert result.returncode == 0, result.stderr
    assert "fetchMetrics" not in result.stdout
    assert "Revenue is up" in result.stdout


def test_stream_prints_a_line_per_tool_on_stderr(app: Path) -> None:
    result = bloge("run", "dataAnalyst", "How is revenue trending this week?", "--stream",
                   cwd=app)
    lines = result.stderr.splitlines()
    assert "→ fetchMetrics (offline_1)" in lines
    assert "✓ fetchMetrics" in lines


def test_stream_starts_each_turns_text_on_a_new_line(app: Path) -> None:
    result = bloge("run", "dataAnalyst", "How is revenue trending this week?", "--stream",
                   cwd=app)
    first, answer = result.stdout.splitlines()
    assert first == "Let me fetch time-series metrics by name."
    assert answer.startswith("Revenue is up")
