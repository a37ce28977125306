"""examples/triage, through the ``bloge`` command on the offline model: triage hands a billing
question to billingAgent, answers others itself; the run shows the chain."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, bloge

BILLING_QUESTION = "I was charged twice for order 1234, please refund me"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A copy of the repository's application (settings, examples)."""
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_triage_hands_a_billing_question_to_billing_which_refunds(app: Path) -> None:
    ran = bloge("run", "triage", BILLING_QUESTION, "--json", cwd=app)
    assert ran.returncode == 0, ran.stderr
    output = json.loads(ran.stdout)
    calls = [call["name"] for message in output["messages"]
             for call in message.get("tool_calls", [])]
    assert calls == ["transfer_to_billing", "issueRefund"]
    assert "RF-1234" in output["content"]
    shown = bloge("runs", "show", output["run_id"], cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert "agent triage → billingAgent" in shown.stdout
    assert "handoff          triage → billingAgent (handoff billing" in shown.stdout
    record = json.loads(bloge("runs", "show", output["run_id"], "--json", cwd=app).stdout)
    assert (record["agent_id"], record["current_agent_id"]) == ("triage", "billingAgent")


def test_triage_answers_a_help_center_question_itself(app: Path) -> None:
    ran = bloge("run", "triage", "How do I reset my password?", "--json", cwd=app)
    assert ran.returncode == 0, ran.stderr
    output = json.loads(ran.stdout)
    assert output["content"].startswith("KB-RESET-001")
    assert not any(call["name"].startswith("transfer_to_") for message in output["messages"]
                   for call in message.get("tool_calls", []))


def test_a_streamed_handoff_is_shown_live(app: Path) -> None:
    ran = bloge("run", "triage", BILLING_QUESTION, "--stream", "--json", cwd=app)
    assert ran.returncode == 0, ran.stderr
    chunks = [json.loads(line) for line in ran.stdout.splitlines()]
    (handoff,) = [chunk for chunk in chunks if chunk["type"] == "handoff"]
    assert (handoff["from_agent"], handoff["to_agent"], handoff["turn"]) == (
        "triage", "billingAgent", 1)
    assert chunks[-1]["type"] == "done"


def test_bloge_check_locates_a_handoff_to_an_agent_no_file_declares(app: Path) -> None:
    dsl = app / "examples" / "triage" / "triage.bloge"
    dsl.write_text(dsl.read_text().replace("agent billingAgent {\n    description",
                                           "agent billingAgnt {\n    description"))
    checked = bloge("check", cwd=app)
    assert checked.returncode == 2
    expected = ("triage.bloge:17:27: handoff 'billing' of agent 'triage' goes to agent "
                "'billingAgnt', which no DSL file declares; did you mean 'billingAgent'?")
    assert expected in checked.stderr
    assert "triage.bloge: ok" not in checked.stdout
    ran = bloge("run", "triage", "hello", cwd=app)
    assert ran.returncode != 0
    assert "billingAgnt" in ran.stderr


def test_triage_asks_the_researcher_as_a_sub_agent_whose_run_is_its_child(app: Path) -> None:
    question = "Please study in depth what several articles report about data export"
    ran = bloge("run", "triage", question, "--json", cwd=app)
    assert ran.returncode == 0, ran.stderr
    output = json.loads(ran.stdout)
    calls = [call["name"] for message in output["messages"]
             for call in message.get("tool_calls", [])]
    assert calls == ["research"]
    record = json.loads(bloge("runs", "show", output["run_id"], "--json", cwd=app).stdout)
    (child,) = record["children"]
    assert (child["agent_id"], child["status"]) == ("researcher", "succeeded")
    child_record = json.loads(bloge("runs", "show", child["id"], "--json", cwd=app).stdout)
    assert child_record["parent_run_id"] == output["run_id"]
