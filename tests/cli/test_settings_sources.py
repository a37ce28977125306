"""The vendors' SDK variables work in a project without any settings file, and ``bloge config``
says where each value came from, printing bracketed names as they are."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.cli.conftest import bloge
from tests.cli.fake_openai import fake_openai
from tests.llm.providers.wire_payloads import openai_completion

AGENT = 'agent ask {\n  model = "gpt-4o"\n}\n'


def test_openai_base_url_sends_the_requests_there_without_a_settings_file(tmp_path: Path) -> None:
    (tmp_path / "ask.bloge").write_text(AGENT, encoding="utf-8")
    with fake_openai() as server:
        result = bloge("run", "ask.bloge", "Hello?", cwd=tmp_path, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-local"})
    assert result.returncode == 0, result.stderr
    assert "Hello from the fake" in result.stdout
    (path, headers), = server.requests
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-local"


def test_config_names_openai_base_url_as_the_source_of_the_base_url(tmp_path: Path) -> None:
    result = bloge("config", "--json", cwd=tmp_path,
                   env={"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["settings"]["bloge"]["llm"]["openai"]["base-url"] == "http://127.0.0.1:11434/v1"
    assert document["sources"]["bloge.llm.openai.base-url"] == (
        "environment variable OPENAI_BASE_URL")


def test_config_prints_bracketed_component_names_literally(app: Path) -> None:
    result = bloge("config", cwd=app)
    assert result.returncode == 0, result.stderr
    assert ("+ LlmProvider[offline]: registered, bloge.llm.provider is 'offline' [on-property]"
            in result.stdout)
    assert "Agent[customerSupport]: registered" in result.stdout


def test_config_prints_bracketed_settings_values_literally(app: Path) -> None:
    result = bloge("config", cwd=app,
                   env={"BLOGE_AGENTS__DSL_LOCATIONS": '["[ab]/*.bloge"]'})
    assert result.returncode == 0, result.stderr
    assert 'bloge.agents.dsl-locations = ["[ab]/*.bloge"]' in result.stdout


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    result = bloge("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"bloge {version('bloge')}\n"


def test_config_shows_the_settings_of_an_application_that_cannot_be_built(
        tmp_path: Path) -> None:
    # bloge config is where a user looks for why: a provider without its key still shows
    # the effective settings and the conditions, then the problem, and exits 2.
    (tmp_path / "ask.bloge").write_text(AGENT, encoding="utf-8")
    env = {"BLOGE_LLM__PROVIDER": "openai", "OPENAI_API_KEY": ""}
    result = bloge("config", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert 'bloge.llm.provider = "openai"' in result.stdout
    assert "Conditions report" in result.stdout
    assert "no API key is set" in result.stderr
    assert "Traceback" not in result.stderr

    result = bloge("config", "--json", cwd=tmp_path, env=env)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert document["settings"]["bloge"]["llm"]["provider"] == "openai"
    assert "no API key is set" in document["error"]


def test_a_model_that_reports_no_usage_is_shown_as_tokens_unknown(tmp_path: Path) -> None:
    (tmp_path / "ask.bloge").write_text(AGENT, encoding="utf-8")
    body = openai_completion("Hello from the fake")
    del body["usage"]  # as some OpenAI-compatible servers answer
    env = {"BLOGE_LLM__PROVIDER": "openai", "OPENAI_API_KEY": "sk-local"}
    with fake_openai(body=body) as server:
        result = bloge("run", "ask.bloge", "Hello?", "--json", cwd=tmp_path,
                       env={**env, "OPENAI_BASE_URL": server.base_url})
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["usage"]["unreported_calls"] == 1
    shown = bloge("runs", "show", output["run_id"], cwd=tmp_path, env=env)
    assert "1 model call, tokens unknown (the model reported no usage)" in shown.stdout
@pytest.mark.parametrize("command", [["config"], ["run", "customerSupport", "hi"], ["check"],
                                     ["threads", "list"]])
def test_a_missing_settings_file_named_by_c_is_named_with_the_option(
        tmp_path: Path, command: list[str]) -> None:
    result = bloge(*command, "-c", "missing.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {tmp_path / 'missing.yaml'}: settings file named by -c/--config does not exist\n")


@pytest.mark.parametrize("command", [["config"], ["check"], ["serve", "--port", "0"],
                                     ["run", "customerSupport", "hi"]])
@pytest.mark.parametrize(("text", "where", "problem"), [
    ("bloge:\n  llm:\n    provider: offline\f\n", "3:22", "character U+000C is not allowed"),
    ("bloge:\n  llm:\n    provider: off\0line\n", "3:18", "character U+0000 is not allowed"),
    ("bloge:\n  llm: " + "[" * 5000 + "]" * 5000 + "\n", "2:70",
     "settings nest deeper than 64 levels"),
])
def test_a_settings_file_yaml_cannot_read_is_exit_2_with_its_file_and_line(
        tmp_path: Path, command: list[str], text: str, where: str, problem: str) -> None:
    (tmp_path / "settings.yaml").write_text(text, encoding="utf-8")
    result = bloge(*command, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"{tmp_path / 'settings.yaml'}:{where}: ")
    assert problem in result.stderr
    assert "Traceback" not in result.stderr
