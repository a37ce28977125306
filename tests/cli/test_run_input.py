"""What ``bloge run`` reads: no input is a usage error (exit 2), and so is a checkpoint file
that cannot be read, each with a message naming the problem."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import BLOGE, bloge, environment


def test_closed_stdin_is_a_usage_error(app: Path) -> None:
    result = subprocess.run(["sh", "-c", '"$0" run customerSupport <&-', str(BLOGE)], cwd=app,
                            capture_output=True, text=True, env=environment(), check=False,
                            timeout=60)
    assert result.returncode == 2, result.stderr
    assert "no input" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("stdin", ["", "\n", "  \n\n"])
def test_empty_stdin_is_a_usage_error(app: Path, stdin: str) -> None:
    result = bloge("run", "customerSupport", cwd=app, stdin=stdin)
    assert result.returncode == 2
    assert "no input" in result.stderr


@pytest.mark.parametrize("argument", ["", "  "])
def test_a_blank_argument_is_a_usage_error(app: Path, argument: str) -> None:
    result = bloge("run", "customerSupport", argument, cwd=app, stdin="")
    assert result.returncode == 2, result.stderr
    assert "no input: the argument is blank" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("thread", ["", " "])
def test_a_blank_thread_id_is_a_usage_error(app: Path, thread: str) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", "--thread", thread,
                   cwd=app)
    assert result.returncode == 2, result.stderr
    assert "--thread needs a thread id, or 'new' to start one" in result.stderr
    listed = bloge("runs", "list", "--json", cwd=app)
    assert json.loads(listed.stdout) == []  # nothing ran, no thread without an id


def test_a_checkpoint_that_is_not_utf8_is_exit_2_naming_the_file(app: Path) -> None:
    checkpoint = app / "latin1.json"
    checkpoint.write_bytes('{"schema": "é"}'.encode("latin-1"))
    result = bloge("run", "customerSupport", "--resume", str(checkpoint), cwd=app, stdin="")
    assert result.returncode == 2
    assert f"checkpoint {checkpoint} is not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_checkpoint_nested_too_deep_is_exit_2_naming_the_file(app: Path) -> None:
    checkpoint = app / "deep.json"
    checkpoint.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = bloge("run", "customerSupport", "--resume", str(checkpoint), cwd=app, stdin="")
    assert result.returncode == 2
    assert f"{checkpoint}: checkpoint is nested too deeply" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_checkpoint_that_is_not_json_is_exit_2_naming_the_file(app: Path) -> None:
    checkpoint = app / "broken.json"
    checkpoint.write_text('{"schema": ', encoding="utf-8")
    result = bloge("run", "customerSupport", "--resume", str(checkpoint), cwd=app, stdin="")
    assert result.returncode == 2
    assert f"{checkpoint}: checkpoint is not valid JSON" in result.stderr
