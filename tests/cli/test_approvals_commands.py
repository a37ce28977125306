"""Approvals from the command line: `bloge run` stops at a call that needs approval (exit 3,
the commands printed), `bloge approvals list|approve|deny` decide it and the last decision
continues the run; `bloge approvals audit --verify` checks the chain; `--wait` waits."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import BLOGE, bloge, environment
from tests.processes import said_until

QUESTION = "How do I reset my password?"
GUARDED = """
agent guardedSupport {
  model = "gpt-4o"
  max_turns = 4
  tool searchKnowledgeBase : KBSearchOperator {
    description = "Search the knowledge base for a relevant article"
    input { query = tool_args.query }
    requires_approval = true
  }
}
"""


@pytest.fixture
def guarded(app: Path) -> Path:
    (app / "examples" / "support" / "guarded.bloge").write_text(GUARDED)
    return app


def paused_run(app: Path) -> tuple[str, str]:
    run = bloge("run", "guardedSupport", QUESTION, cwd=app)
    assert run.returncode == 3, run.stderr
    found = re.search(r"bloge approvals approve (\w+) (\S+)", run.stderr)
    assert found is not None, run.stderr
    return found[1], found[2]


def test_bloge_run_stops_at_an_approval_and_prints_how_to_decide(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    listed = bloge("approvals", "list", "--json", cwd=guarded)
    (pending,) = json.loads(listed.stdout)
    assert (pending["run_id"], pending["call_id"]) == (run_id, call_id)
    assert pending["tool"] == "searchKnowledgeBase"
    shown = bloge("runs", "show", run_id, cwd=guarded).stdout
    assert "status awaiting_approval" in shown
    assert f"waits for a decision: {call_id} searchKnowledgeBase(" in shown


def test_approving_the_last_call_continues_the_run(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    approved = bloge("approvals", "approve", run_id, call_id, "--reason", "fine", cwd=guarded)
    assert approved.returncode == 0, approved.stderr
    assert f"approved {call_id} of run {run_id}" in approved.stdout
    assert "KB-RESET-001" in approved.stdout
    shown = bloge("runs", "show", run_id, "--json", cwd=guarded)
    assert json.loads(shown.stdout)["status"] == "succeeded"
    timeline = bloge("runs", "show", run_id, cwd=guarded).stdout
    assert f"searchKnowledgeBase {call_id} waits for a decision" in timeline
    assert f"searchKnowledgeBase {call_id} approved by user:" in timeline


def test_a_denied_call_tells_the_model_why(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    denied = bloge("approvals", "deny", run_id, call_id, "--reason", "not today",
                   "--no-continue", cwd=guarded)
    assert denied.returncode == 0, denied.stderr
    resumed = bloge("runs", "resume", run_id, "--json", cwd=guarded)
    assert resumed.returncode == 0, resumed.stderr
    tools = [m["content"] for m in json.loads(resumed.stdout)["messages"] if m["role"] == "tool"]
    assert "denied: not today" in tools[0]


def test_a_decision_that_leaves_the_run_paused_says_how_it_goes_on(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    decided = bloge("approvals", "approve", run_id, call_id, "--no-continue", cwd=guarded)
    assert decided.returncode == 0, decided.stderr
    assert (f"a bloge serve continues run {run_id} within a minute, or bloge runs resume "
            f"{run_id}") in decided.stdout
    thread = json.loads(bloge("runs", "show", run_id, "--json", cwd=guarded).stdout)["thread_id"]
    busy = bloge("run", "guardedSupport", "next", "--thread", thread, cwd=guarded)
    assert busy.returncode != 0
    assert f"continue it with bloge runs resume {run_id}" in " ".join(busy.stderr.split())


def test_every_decision_is_audited_and_the_chain_verifies(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    bloge("approvals", "deny", run_id, call_id, "--reason", "no", "--no-continue", cwd=guarded)
    audited = bloge("approvals", "audit", "--json", cwd=guarded)
    (record,) = json.loads(audited.stdout)
    assert record["knob"] == "tool:searchKnowledgeBase"
    verified = bloge("approvals", "audit", "--verify", cwd=guarded)
    assert verified.returncode == 0, verified.stderr
    assert "verifies: 1 records" in verified.stdout


def answered_once_approved(guarded: Path, *command: str) -> str:
    """The output of ``bloge <command> --wait``, which waits for its call's approval, once
    another ``bloge approvals approve`` gave it."""
    waiting = subprocess.Popen([str(BLOGE), *command, "--wait"], cwd=guarded,
                               env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    said = said_until(waiting, lambda said: bool(said) and "bloge approvals approve" in said[-1],
                      "the command that approves its call", stream="stderr")
    found = re.search(r"bloge approvals approve (\w+) (\S+)", said[-1])
    assert found is not None
    decided = bloge("approvals", "approve", found[1], found[2], "--no-continue", cwd=guarded)
    assert decided.returncode == 0, decided.stderr
    out, _ = waiting.communicate(timeout=60)
    assert waiting.returncode == 0
    return out


def test_run_wait_waits_for_the_decision_and_continues(guarded: Path) -> None:
    assert "KB-RESET-001" in answered_once_approved(guarded, "run", "guardedSupport", QUESTION)


def test_bloge_run_json_prints_the_waiting_calls_as_json(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, "--json", cwd=guarded)
    assert run.returncode == 3, run.stderr
    paused = json.loads(run.stdout)
    assert paused["status"] == "awaiting_approval"
    assert [call["tool"] for call in paused["pending"]] == ["searchKnowledgeBase"]
    (listed,) = json.loads(bloge("approvals", "list", "--json", cwd=guarded).stdout)
    (call,) = paused["pending"]
    assert (call["run_id"], call["expires_at"]) == (listed["run_id"], listed["expires_at"])
    assert call["expires_at"] is not None


TEAM = GUARDED + """
agent frontDesk {
  model = "gpt-4o"
  max_turns = 4
  tool askSupport : agent guardedSupport {
    description = "Ask the support agent how to reset a password"
  }
}
"""


def test_a_sub_agents_call_is_decided_by_its_callers_run_which_then_finishes(
        app: Path) -> None:
    (app / "examples" / "support" / "guarded.bloge").write_text(TEAM)
    run = bloge("run", "frontDesk", QUESTION, cwd=app)
    assert run.returncode == 3, run.stderr
    assert "in sub-agent run" in run.stderr
    found = re.search(r"bloge approvals approve (\w+) (\S+)", run.stderr)
    assert found is not None, run.stderr
    caller, call_id = found[1], found[2]
    listed = json.loads(bloge("approvals", "list", "--json", cwd=app).stdout)
    assert [(p["call_id"], p["tool"]) for p in listed] == [(call_id, "searchKnowledgeBase")]
    shown = bloge("runs", "show", caller, cwd=app).stdout
    assert f"waits for a decision: {call_id} searchKnowledgeBase(" in shown
    assert f"in sub-agent run {listed[0]['run_id']}" in shown
    approved = bloge("approvals", "approve", caller, call_id, cwd=app)
    assert approved.returncode == 0, approved.stderr
    assert "KB-RESET-001" in approved.stdout
    ended = json.loads(bloge("runs", "show", caller, "--json", cwd=app).stdout)
    assert ended["status"] == "succeeded"
    assert [child["status"] for child in ended["children"]] == ["succeeded"]


def test_a_usd_limit_on_a_model_without_a_price_is_refused_and_the_run_waits_on(
        app: Path) -> None:
    (app / "examples" / "support" / "guarded.bloge").write_text(
        GUARDED.replace('"gpt-4o"', '"house-model"'))
    run_id, call_id = paused_run(app)
    refused = bloge("runs", "resume", run_id, "--budget", "usd=1", cwd=app)
    assert refused.returncode == 2
    assert ("error: --budget usd=1: no price for model 'house-model', so a usd budget cannot "
            "be kept; add it to bloge.budgets.prices") in refused.stderr
    shown = bloge("runs", "show", run_id, cwd=app).stdout
    assert "status awaiting_approval · 1 turn · 1 model call," in shown
    assert f"waits for a decision: {call_id} searchKnowledgeBase(" in shown
    bloge("approvals", "approve", run_id, call_id, "--no-continue", cwd=app)
    resumed = bloge("runs", "resume", run_id, "--budget", "tokens=100000", cwd=app)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout


NO_STORE = {"BLOGE_STORE__ENABLED": "false"}


def test_a_run_that_pauses_with_the_store_off_says_it_cannot_be_decided(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, cwd=guarded, env=NO_STORE)
    assert run.returncode == 2
    assert "searchKnowledgeBase (" in run.stderr
    assert "a paused run waits in the run store, and bloge.store.enabled is false" in run.stderr
    assert "bloge approvals" not in run.stderr


def test_a_run_that_pauses_with_the_store_off_is_a_json_error(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, "--json", cwd=guarded, env=NO_STORE)
    assert run.returncode == 2
    document = json.loads(run.stdout)
    assert document["error"]["type"] == "RunPaused"
    assert "bloge.store.enabled is false" in document["error"]["message"]
    assert document["run_id"] is None


def test_wait_with_the_store_off_is_refused_before_the_run(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, "--wait", cwd=guarded, env=NO_STORE)
    assert run.returncode == 2
    assert ("error: --wait waits for the decisions in the run store, and bloge.store.enabled "
            "is false") in run.stderr


def test_stream_json_ends_a_paused_run_with_one_paused_line(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, "--stream", "--json", "--thread", "new",
                cwd=guarded)
    assert run.returncode == 3, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert all("type" in line for line in lines)
    paused = lines[-1]
    assert paused["type"] == "paused"
    assert paused["status"] == "awaiting_approval"
    assert paused["thread_id"]
    assert [call["tool"] for call in paused["pending"]] == ["searchKnowledgeBase"]
    assert paused["pending"][0]["run_id"] == paused["run_id"]


def test_a_paused_run_on_a_new_thread_prints_the_thread(guarded: Path) -> None:
    run = bloge("run", "guardedSupport", QUESTION, "--thread", "new", cwd=guarded)
    assert run.returncode == 3, run.stderr
    found = re.search(r"run (\w+) on thread (\w+)", run.stderr)
    assert found is not None, run.stderr
    shown = json.loads(bloge("runs", "show", found[1], "--json", cwd=guarded).stdout)
    assert shown["thread_id"] == found[2]


def test_runs_resume_wait_waits_for_the_decision_and_continues(guarded: Path) -> None:
    run_id, _ = paused_run(guarded)
    assert "KB-RESET-001" in answered_once_approved(guarded, "runs", "resume", run_id)


def test_a_denial_with_a_blank_reason_is_refused(guarded: Path) -> None:
    run_id, call_id = paused_run(guarded)
    denied = bloge("approvals", "deny", run_id, call_id, "--reason", " ", cwd=guarded)
    assert denied.returncode == 2
    assert "error: --reason needs a reason" in denied.stderr
    shown = bloge("runs", "show", run_id, cwd=guarded).stdout
    assert f"waits for a decision: {call_id} searchKnowledgeBase(" in shown
