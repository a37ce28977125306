"""The ``bloge`` command, through its real console-script entry point, in a copy of the
application so that nothing is written into the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from bloge_container.cli import app as cli_app
from bloge_container.cli.app import COMMANDS

REPO = Path(__file__).resolve().parents[1]
BLOGE = Path(sys.executable).with_name("bloge")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def bloge(*args: str, cwd: Path, stdin: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BLOGE_")}
    environment.update(env or {})
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, env=environment, check=False, timeout=60)


def test_run_answers_with_the_offline_model(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "KB-RESET-001" in result.stdout
    assert "Reset the password" in result.stdout


def test_run_reads_the_input_from_stdin(app: Path) -> None:
    result = bloge("run", "customerSupport", cwd=app,
                   stdin="I need a refund for order 1234, please open a ticket\n")
    assert result.returncode == 0, result.stderr
    assert "I created ticket TCK-1001" in result.stdout
    assert (app / "var" / "tickets.db").exists()


def test_run_json_prints_the_whole_output(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", "--json", cwd=app)
    output = json.loads(result.stdout)
    assert output["finish_reason"] == "stop"
    assert output["turns_used"] == 2
    (tool_result,) = output["tool_results"].values()
    assert tool_result["articleId"] == "KB-RESET-001"
    assert output["checkpoint"]["schema"] == "bloge.agent.checkpoint/1"


def test_run_stream_json_prints_one_object_per_chunk(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", "--stream", "--json",
                   cwd=app)
    chunks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["type"] for c in chunks if c["type"] != "token"] == ["tool_start", "tool_end", "done"]
    assert "KB-RESET-001" in chunks[-1]["content"]


def test_run_stream_json_names_the_run_in_its_done_line(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", "--stream", "--json",
                   cwd=app)
    done = json.loads(result.stdout.splitlines()[-1])
    listed = json.loads(bloge("runs", "list", "--json", cwd=app).stdout)
    assert done["run_id"] == listed[0]["id"]
    assert done["thread_id"] == listed[0]["thread_id"]


def test_run_a_dsl_file_directly(app: Path) -> None:
    source = app / "examples" / "support" / "agent-customer-support.bloge"
    result = bloge("run", str(source), "How do I reset my password?", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "KB-RESET-001" in result.stdout


def test_a_bad_dsl_file_is_exit_2_with_its_location(app: Path) -> None:
    bad = app / "bad.bloge"
    bad.write_text('agent broken {\n  model = "m"\n  max_turns = 0\n}\n', encoding="utf-8")
    result = bloge("run", str(bad), "hello", cwd=app)
    assert result.returncode == 2
    assert f"{bad}:3:15: max_turns must be at least 1, got 0" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_settings_file_is_exit_2_naming_it(app: Path) -> None:
    result = bloge("run", "customerSupport", "hi", "--config", str(app / "missing.yaml"), cwd=app)
    assert result.returncode == 2
    assert "missing.yaml" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_setting_is_exit_2_naming_the_variable(app: Path) -> None:
    result = bloge("agents", cwd=app, env={"BLOGE_LLM__PROVIDER": "gpt"})
    assert result.returncode == 2
    assert "BLOGE_LLM__PROVIDER" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_agent_is_exit_2_with_a_suggestion(app: Path) -> None:
    result = bloge("run", "customerSuport", "hi", cwd=app)
    assert result.returncode == 2
    assert "did you mean 'customerSupport'?" in result.stderr


def test_max_turns_saves_a_checkpoint_and_prints_the_resume_command(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", "--max-turns", "1",
                   cwd=app)
    assert result.returncode == 1
    assert "max_turns=1" in result.stderr
    command = next(line.strip() for line in result.stderr.splitlines()
                   if line.strip().startswith("bloge run"))
    resumed = bloge(*command.split()[1:], cwd=app)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout


def test_the_provider_is_swapped_with_one_environment_variable(app: Path) -> None:
    result = bloge("config", "--json", cwd=app,
                   env={"BLOGE_LLM__PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-secret"})
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["settings"]["bloge"]["llm"]["provider"] == "anthropic"
    assert document["sources"]["bloge.llm.provider"] == "environment variable BLOGE_LLM__PROVIDER"
    registered = {c["component"] for c in document["conditions"] if c["registered"]}
    assert "LlmProvider[anthropic]" in registered
    assert "LlmProvider[offline]" not in registered
    assert "sk-ant-secret" not in result.stdout


def test_config_masks_secrets_and_prints_the_conditions_report(app: Path) -> None:
    result = bloge("config", cwd=app, env={"OPENAI_API_KEY": "sk-very-secret"})
    assert result.returncode == 0, result.stderr
    assert "sk-very-secret" not in result.stdout
    assert "bloge.llm.openai.api-key" in result.stdout
    assert "AgentEventJournalBridge: not registered, bloge.event-journal.enabled is false" in result.stdout


def test_agents_lists_both_examples(app: Path) -> None:
    result = bloge("agents", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "customerSupport  agent  model gpt-4o" in result.stdout
    assert "dataAnalyst  stream agent" in result.stdout


def test_check_accepts_the_configured_agents(app: Path) -> None:
    result = bloge("check", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "agent customerSupport" in result.stdout
    assert "agent dataAnalyst" in result.stdout


def test_check_reports_every_error_with_its_location_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bloge"
    bad.write_text("agent a {\n  max_turn = 1\n}\n", encoding="utf-8")
    result = bloge("check", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{bad}:2:3: unknown keyword 'max_turn' in agent 'a'; did you mean 'max_turns'?" in result.stderr
    assert f"{bad}:1:7: agent 'a' has no model" in result.stderr


def test_check_reports_an_operator_the_settings_do_not_register(app: Path) -> None:
    bad = app / "typo.bloge"
    bad.write_text('agent a {\n  model = "m"\n  tool search : KBSearchOperatr {\n'
                   '    input { city = tool_arg.city }\n  }\n}\n', encoding="utf-8")
    result = bloge("check", str(bad), cwd=app)
    assert result.returncode == 2
    assert (f"{bad}:3:17: tool 'search' refers to operator 'KBSearchOperatr', which is not in "
            "the registry; did you mean 'KBSearchOperator'?") in result.stderr
    assert (f"{bad}:4:20: unknown variable 'tool_arg' in input binding 'city'; "
            "did you mean 'tool_args'?") in result.stderr


def test_check_reports_an_agent_declared_in_two_files_as_the_application_would(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a.bloge", tmp_path / "b.bloge"
    for path in (first, second):
        path.write_text('/// calc\nagent calc {\n  model = "m"\n}\n', encoding="utf-8")
    result = bloge("check", str(first), str(second), cwd=tmp_path)
    assert result.returncode == 2
    assert (f"{second}:2:1: agent 'calc' is declared twice: first at {first}:2:1; names must "
            "be unique across the files the application loads") in result.stderr
    assert result.stderr.endswith("1 error in 1 of 2 files\n")


def test_check_reports_a_tool_running_an_undeclared_agent_and_a_cycle_where_they_are_named(
    tmp_path: Path,
) -> None:
    team = tmp_path / "team.bloge"
    team.write_text('agent alpha {\n  model = "m"\n  tool ask : agent bravo { }\n}\n'
                    'agent bravo {\n  model = "m"\n  tool back : agent alpha { }\n}\n'
                    'agent charlie {\n  model = "m"\n  tool sub : agent nobody { }\n}\n',
                    encoding="utf-8")
    result = bloge("check", str(team), cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith(str(team))]
    assert lines == [(f"{team}:7:21: agents call each other in a cycle: alpha → bravo → alpha; "
                      "a sub-agent cannot ask an agent that is waiting for it"),
                     (f"{team}:11:20: tool 'sub' runs agent 'nobody', which no DSL file declares "
                      "(agents: alpha, bravo, charlie)")]
    assert result.stderr.endswith("2 errors in 1 file\n")


def test_check_does_not_say_no_file_declares_an_agent_whose_file_did_not_compile(
    tmp_path: Path,
) -> None:
    first, broken = tmp_path / "a.bloge", tmp_path / "z.bloge"
    first.write_text('agent a {\n  model = "m"\n  handoff z : agent z { description = "z" }\n}\n',
                     encoding="utf-8")
    broken.write_text('agent z {\n  model = "m\n}\n', encoding="utf-8")
    result = bloge("check", str(first), str(broken), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{broken}:2:11: unterminated string" in result.stderr
    assert (f"{first}:3:21: handoff 'z' of agent 'a' goes to agent 'z', which no DSL file that "
            f"compiled declares (not compiled: {broken})") in result.stderr


@pytest.mark.parametrize(("bad", "good", "summary"), [
    (1, 2, "1 error in 1 of 3 files"), (2, 1, "2 errors in 2 of 3 files"),
    (2, 0, "2 errors in 2 files"), (1, 0, "1 error in 1 file")])
def test_check_counts_the_files_with_errors_among_those_checked(
        tmp_path: Path, bad: int, good: int, summary: str) -> None:
    paths = []
    for n in range(bad + good):
        path = tmp_path / f"a{n}.bloge"
        value = '"m"' if n >= bad else ""  # an agent with no model: one syntax error
        path.write_text(f"agent a{n} {{\n  model = {value}\n}}\n", encoding="utf-8")
        paths.append(str(path))
    result = bloge("check", *paths, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.endswith(f"{summary}\n")


def test_check_of_a_file_that_is_not_utf8_names_the_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "binary.bloge"
    bad.write_bytes(b'agent a {\n  model = "m\xff"\n}\n')
    result = bloge("check", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{bad}:2:13: byte 0xff is not UTF-8 (invalid start byte)" in result.stderr


def test_check_of_a_deeply_nested_file_is_a_located_error_without_a_traceback(
    tmp_path: Path,
) -> None:
    deep = tmp_path / "deep.bloge"
    deep.write_text('agent a {\n  model = "m"\n  exit_condition = ' + "!" * 5000 + "true\n}\n",
                    encoding="utf-8")
    result = bloge("check", str(deep), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{deep}:3:" in result.stderr
    assert "nested deeper than 100 levels" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_check_needs_no_api_key(app: Path) -> None:
    result = bloge("check", cwd=app, env={"BLOGE_LLM__PROVIDER": "openai",
                                          "OPENAI_API_KEY": ""})
    assert result.returncode == 0, result.stderr
    assert "agent customerSupport" in result.stdout


def test_run_without_input_is_a_usage_error(app: Path) -> None:
    result = bloge("run", "customerSupport", cwd=app, stdin="")
    assert result.returncode == 2
    assert "no input" in result.stderr


def test_run_json_masks_credentials_inside_urls(app: Path) -> None:
    result = bloge("run", "customerSupport", "My proxy is https://bob:s3cret-key@proxy.example "
                   "and my password reset fails", "--json", cwd=app)
    assert result.returncode == 0, result.stderr
    assert "s3cret-key" not in result.stdout
    assert json.loads(result.stdout)["messages"]


def test_bloge_no_cache_turns_the_cache_off_and_every_command_still_works(app: Path) -> None:
    result = bloge("run", "customerSupport", "How do I reset my password?", cwd=app,
                   env={"BLOGE_NO_CACHE": "1"})
    assert result.returncode == 0, result.stderr
    assert "KB-RESET-001" in result.stdout


def test_the_help_lists_each_command_with_its_own_short_help() -> None:
    group = typer.main.get_group(cli_app)
    for name, command in COMMANDS.items():
        loaded = group.get_command(typer.Context(group), name)
        assert loaded is not None
        assert loaded.name == name
        assert loaded.get_short_help_str(1000) == command.help, name
    listing = bloge("--help", cwd=REPO).stdout
    assert all(f"  {name} " in listing for name in COMMANDS)


def test_bloge_help_loads_no_command_and_bloge_run_only_its_own() -> None:
    def loaded(*args: str) -> set[str]:
        script = ("import sys\nfrom bloge_container.cli import main\n"
                  f"sys.argv = ['bloge', *{list(args)!r}]\n"
                  "try:\n    main()\nexcept SystemExit:\n    pass\n"
                  "print('modules:', *sorted(sys.modules), file=sys.stderr)")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=REPO, check=True, timeout=60)
        return set(done.stderr.rpartition("modules:")[2].split())

    commands = {f"bloge_container.cli.{command.module}" for command in COMMANDS.values()}
    after_help = loaded("--help")
    assert not commands & after_help
    assert not {"rich", "asyncio", "bloge", "bloge_config"} & after_help
    assert commands & loaded("run", "--help") == {"bloge_container.cli.run"}
