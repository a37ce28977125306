"""With the journal in a file of its own, the events of the calls paused runs wait on are in
it too — requested, decided, given their result, expired — once each, whoever took the step
(the run, or a decider outside it), with secrets masked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from bloge import OperatorContext, RunPaused
from bloge.llm import ScriptedProvider
from bloge.store import decide_call, post_tool_results
from bloge_config import load_settings
from bloge_container import close_container, create_container
from tests.runtime.helpers import calls

SECRET = "sk-live-do-not-log-0123456789"
SETTINGS = """
bloge:
  agents:
    dsl-locations: ["agents/*.bloge"]
  operators:
    Pay: "shop:pay"
  store:
    url: sqlite:///var/runs.db
  event-journal:
    enabled: true
    sink: file
"""
AGENT = """
agent payer {
  model = "m"
  max_turns = 4
  tool pay : Pay { input { to = tool_args.to }  requires_approval = true }
  tool ask_user : external { description = "Ask the user"  parameters { q = "string" } }
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "settings.yaml").write_text(SETTINGS, encoding="utf-8")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "payer.bloge").write_text(AGENT, encoding="utf-8")
    (tmp_path / "shop.py").write_text("def pay(input):\n    return 'paid ' + input['to']\n",
                                      encoding="utf-8")
    return tmp_path


def journal(project: Path) -> list[dict[str, Any]]:
    lines = (project / "var" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_events_of_waiting_calls_are_journaled_once_each_with_secrets_masked(
        project: Path) -> None:
    settings = load_settings(base_dir=project, environ={"OPENAI_API_KEY": SECRET})
    container = create_container(settings, project_dir=project)
    container.llm_provider.override(providers.Object(ScriptedProvider(
        calls(("pay", {"to": f"ann token={SECRET}"}, "a"), ("ask_user", {"q": "which?"}, "e")),
        "done", calls(("ask_user", {"q": "anyone?"}, "f")), "done too")))
    agent = container.agents()["payer"].operator
    store = container.run_store()

    async def run() -> tuple[str, str]:
        try:
            with pytest.raises(RunPaused) as caught:
                await agent.aexecute("pay ann", OperatorContext.root())
            decided = caught.value.run_id or ""
            # Deciders outside the run: as bloge approvals and POST …/tool-results do.
            await decide_call(store, decided, "a", approve=True, principal="user:bob")
            await post_tool_results(store, decided, {"e": "the blue one"})
            await agent.aresume_run(decided)
            store.tool_results_expiry = 0.0  # f expires unanswered: no result came
            with pytest.raises(RunPaused) as caught:
                await agent.aexecute("ask", OperatorContext.root())
            expired = caught.value.run_id or ""
            await agent.aresume_run(expired)
            return decided, expired
        finally:
            await close_container(container)

    decided, expired = asyncio.run(run())
    events = journal(project)
    assert [told(e) for e in events if e["execution_id"] == decided and called(e)] == [
        ("approval_required", "a"), ("tool_results_required", "e"),
        ("approval_decided", "a"), ("tool_results_posted", ["e"])]
    assert [told(e) for e in events if e["execution_id"] == expired and called(e)] == [
        ("tool_results_required", "f"), ("tool_results_expired", "f")]
    assert SECRET not in (project / "var" / "journal.jsonl").read_text(encoding="utf-8")


def called(event: dict[str, Any]) -> bool:
    return not event["event"].startswith("on_agent")


def told(event: dict[str, Any]) -> tuple[str, Any]:
    return event["event"], event.get("call_id") or event.get("call_ids")
