"""The journal is wired only when enabled, and then records every callback of a run."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from dependency_injector import providers

from bloge import AgentRunError, OperatorContext, ProviderError
from bloge.llm import (
    FunctionProvider,
    LlmProvider,
    LlmRequest,
    ScriptedProvider,
    tool_call_response,
)
from bloge_config import load_settings
from bloge_container import close_container, create_container
from tests.runtime.helpers import agent_with

#: The journal in its file (the run store holds the same events by default).
FILE_JOURNAL = {"BLOGE_EVENT_JOURNAL__ENABLED": "true", "BLOGE_EVENT_JOURNAL__SINK": "file"}

CALLBACKS = [
    "on_agent_turn_started", "on_agent_llm_called", "on_agent_tool_dispatched",
    "on_agent_tool_completed", "on_agent_turn_started", "on_agent_llm_called",
    "on_agent_loop_exited",
]


def run_support_agent(project: Path, environ: dict[str, str],
                      model: LlmProvider | None = None) -> tuple[object, str]:
    settings = load_settings(base_dir=project, environ=environ)
    container = create_container(settings, project_dir=project)
    container.llm_provider.override(providers.Object(model or ScriptedProvider(
        tool_call_response("searchKnowledgeBase", '{"query": "reset password"}'), "Done.")))
    agent = container.agents()["customerSupport"].operator
    ctx = OperatorContext.root()

    async def run() -> str | None:
        try:
            output = await agent.aexecute("How do I reset my password?", ctx)
        finally:
            await close_container(container)
        return output.run_id

    run_id = asyncio.run(run())
    return container, run_id or ctx.execution_id


def test_with_the_journal_on_every_callback_is_recorded_in_order(project: Path) -> None:
    container, execution_id = run_support_agent(
        project, {**FILE_JOURNAL, "OPENAI_API_KEY": "sk-do-not-log"})
    lines = (project / "var" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["event"] for e in events] == CALLBACKS
    assert {e["execution_id"] for e in events} == {execution_id}
    assert [e["seq"] for e in events] == list(range(1, 8))
    assert events[3]["tool_name"] == "searchKnowledgeBase"
    assert events[3]["success"] is True
    assert events[-1]["exit_reason"] == "stop"
    assert all("timestamp" in e and e["operator_ref"] == "customerSupport" for e in events)
    assert "sk-do-not-log" not in "".join(lines)
    assert container.report().find("AgentEventJournalBridge").registered


def test_with_the_journal_off_no_bridge_is_registered_and_nothing_is_written(project: Path) -> None:
    container, _ = run_support_agent(project, {})
    assert container.journal_bridge() is None
    assert all(type(listener).__name__ != "AgentEventJournalBridge"
               for listener in container.listeners())
    assert not (project / "var" / "journal.jsonl").exists()
    condition = container.report().find("AgentEventJournalBridge")
    assert (condition.registered, condition.reason) == (False, "bloge.event-journal.enabled is false")
    told = [c for c in container.report().conditions if c.component == "AgentEventJournalBridge"]
    assert told == [condition]  # once, though the journal was asked for again


def test_the_journal_is_skipped_with_a_reason_when_its_module_is_missing(
    project: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "structlog" else real(name, *a))
    settings = load_settings(base_dir=project, environ=FILE_JOURNAL)
    container = create_container(settings, project_dir=project)
    assert container.journal_bridge() is None
    condition = container.report().find("AgentEventJournalBridge")
    assert (condition.kind, condition.registered) == ("on-class", False)
    assert "structlog is not installed" in condition.reason


def test_journal_show_prints_the_timeline_of_a_run(project: Path) -> None:
    _, execution_id = run_support_agent(project, FILE_JOURNAL)
    result = subprocess.run([str(Path(sys.executable).with_name("bloge")), "journal", "show",
                             execution_id[:10]], capture_output=True, text=True, cwd=project,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"execution {execution_id} · customerSupport · 7 events")
    assert "tool_completed   searchKnowledgeBase" in result.stdout
    assert "exit stop after 2 turns" in lines[-1]


def journal_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_unopenable_journal_path_gives_one_warning_and_the_run_goes_on(
    project: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    (project / "var").write_text("a file where the journal's folder should be")
    container, _ = run_support_agent(project, {**FILE_JOURNAL, "BLOGE_STORE__ENABLED": "false"})
    warnings = [r.getMessage() for r in caplog.records if r.name == "bloge.journal"]
    assert len(warnings) == 1
    assert "cannot open the event journal" in warnings[0]
    assert container.report().find("AgentEventJournalBridge").registered


def test_a_failed_run_records_why_in_the_journal(project: Path) -> None:
    def fail(request: LlmRequest) -> None:
        raise ProviderError("overloaded at https://ada:PW-1@proxy.example/v1",
                            provider="openai", status_code=503)

    with pytest.raises(AgentRunError):
        run_support_agent(project, FILE_JOURNAL, model=FunctionProvider(fail))
    exited = journal_lines(project / "var" / "journal.jsonl")[-1]
    assert (exited["exit_reason"], exited["error_type"]) == ("error", "ProviderError")
    assert exited["error_message"] == (
        "openai (HTTP 503): overloaded at https://ada:[redacted]@proxy.example/v1")


def test_without_a_settings_file_the_journal_is_the_project_s_var_journal_jsonl(
    tmp_path: Path,
) -> None:
    settings = load_settings(base_dir=tmp_path, environ=FILE_JOURNAL)
    container = create_container(settings, project_dir=tmp_path)
    agent_with(ScriptedProvider("hi"), listeners=[container.journal_bridge()]).execute("go")
    container.event_journal().close()
    events = journal_lines(tmp_path / "var" / "journal.jsonl")
    assert [e["event"] for e in events][-1] == "on_agent_loop_exited"


def test_with_the_store_on_the_journal_is_the_run_stores_events(project: Path) -> None:
    container, run_id = run_support_agent(project, {"BLOGE_EVENT_JOURNAL__ENABLED": "true"})
    condition = container.report().find("AgentEventJournalBridge")
    assert condition.registered
    assert "redacted as the journal's events, into the run store's events" in condition.reason
    assert not (project / "var" / "journal.jsonl").exists()
    result = subprocess.run([str(Path(sys.executable).with_name("bloge")), "journal", "show",
                             run_id[:10]], capture_output=True, text=True, cwd=project,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith(
        f"execution {run_id} · customerSupport · 7 events")
