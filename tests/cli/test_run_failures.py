"""A failed run saves its checkpoint and prints the command that resumes it; with ``--json`` it
prints one JSON document (error, exit reason, checkpoint file) and still exits 1."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from bloge import AgentCheckpoint
from bloge.llm import LlmMessage
from bloge_container.cli import failures
from tests.cli.conftest import bloge
from tests.cli.fake_openai import fake_openai
from tests.llm.providers.wire_payloads import openai_error

QUESTION = "How do I reset my password?"
KEY = "sk-do-not-print-me"


def test_json_max_turns_failure_prints_one_document_and_exits_1(app: Path) -> None:
    result = bloge("run", "customerSupport", QUESTION, "--max-turns", "1", "--json", cwd=app)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["error"]["type"] == "MaxTurnsExceededError"
    assert "max_turns=1" in document["error"]["message"]
    assert document["exit_reason"] == "max_turns"
    assert (app / document["checkpoint_file"]).is_file()
    assert "--max-turns 2" in document["resume_command"]


def test_json_provider_failure_prints_one_document_without_the_key(app: Path) -> None:
    rejected = openai_error(f"Incorrect API key provided: {KEY}", "invalid_request_error")
    with fake_openai(401, rejected) as server:
        result = bloge("run", "customerSupport", QUESTION, "--json", cwd=app, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY})
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert (document["error"]["type"], document["error"]["cause"]) == ("AgentRunError",
                                                                       "ProviderError")
    assert "HTTP 401" in document["error"]["message"]
    assert document["exit_reason"] == "error"
    assert (app / document["checkpoint_file"]).is_file()
    assert KEY not in result.stdout + result.stderr


def test_a_provider_failure_saves_a_checkpoint_and_prints_the_resume_command(app: Path) -> None:
    with fake_openai(401, openai_error("bad key", "invalid_request_error")) as server:
        result = bloge("run", "customerSupport", QUESTION, cwd=app, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY})
    assert result.returncode == 1
    assert "openai (HTTP 401): bad key" in result.stderr
    command = shlex.split(result.stderr.splitlines()[-1])
    assert command[:4] == ["bloge", "run", "customerSupport", "--resume"]
    assert (app / command[4]).is_file()


def test_stream_json_failure_ends_the_json_lines_with_an_error_line(app: Path) -> None:
    result = bloge("run", "customerSupport", QUESTION, "--stream", "--json", "--max-turns", "1",
                   cwd=app)
    assert result.returncode == 1, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["type"] == "error"
    assert lines[-1]["exit_reason"] == "max_turns"


def test_the_resume_command_names_the_settings_file_it_was_run_with(app: Path) -> None:
    result = bloge("run", "customerSupport", QUESTION, "--max-turns", "1",
                   "-c", f"{app.name}/settings.yaml", cwd=app.parent)
    assert result.returncode == 1
    command = shlex.split(result.stderr.splitlines()[-1])
    assert command[command.index("--config") + 1] == f"{app.name}/settings.yaml"
    resumed = bloge(*command[1:], cwd=app.parent)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout


def test_runs_of_one_agent_stopped_in_the_same_second_keep_a_checkpoint_each(
    tmp_path: Path,
) -> None:
    first = AgentCheckpoint((LlmMessage.user("from Alice"),), 1, {}, "support")
    second = AgentCheckpoint((LlmMessage.user("from Bob"),), 1, {}, "support")
    saved = [failures.save_checkpoint(checkpoint, tmp_path) for checkpoint in (first, second)]
    assert saved[0] != saved[1]
    assert [AgentCheckpoint.from_json(path.read_text(encoding="utf-8")).conversation[0].content
            for path in saved] == ["from Alice", "from Bob"]
