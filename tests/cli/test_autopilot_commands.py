"""``bloge autopilot`` and ``bloge config`` on a project whose settings declare knobs."""

from __future__ import annotations

import asyncio
import getpass
import json
import sqlite3
from pathlib import Path

import pytest

from bloge.autopilot import Autopilot, Knob, KnobTier, Proposed
from bloge.store import open_store
from tests.cli.conftest import bloge

KNOBS = """
  autopilot:
    knobs:
      concurrency:
        tier: whitelist
        min: 1
        max: 8
        value: 2
        binding: agents.customerSupport.max-tool-concurrency
      attempts:
        tier: dangerous
        min: 1
        max: 6
        binding: llm.retry.max-attempts
"""


@pytest.fixture
def project(app: Path) -> Path:
    """The repository's application with the knobs above instead of its own."""
    settings = app / "settings.yaml"
    text = settings.read_text()
    start, end = text.index("  # Knobs agents may"), text.index("  event-journal:")
    settings.write_text(text[:start] + text[end:] + KNOBS)
    return app


def _propose(project: Path, knob: str, value: float, *, principal: str) -> str:
    async def propose() -> str:
        store = open_store(f"sqlite:///{project / 'var' / 'bloge.db'}")
        pilot = Autopilot(store=store)
        pilot.register_knob(Knob("concurrency", KnobTier.WHITELIST, 1, 8, 2))
        pilot.register_knob(Knob("attempts", KnobTier.DANGEROUS, 1, 6, 4))
        decision = await pilot.apropose(knob, value, principal=principal)
        await store.aclose()
        assert isinstance(decision, Proposed)
        return decision.proposal_id

    return asyncio.run(propose())


def test_a_proposal_is_listed_approved_and_shown_in_config(project: Path) -> None:
    proposal_id = _propose(project, "attempts", 6, principal="agent:ops")
    listed = bloge("autopilot", "proposals", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert f"{proposal_id}  attempts 4 -> 6  by agent:ops" in listed.stdout
    approved = bloge("autopilot", "approve", proposal_id, cwd=project)
    assert approved.returncode == 0, approved.stderr
    assert f"approved {proposal_id}: attempts 4 -> 6" in approved.stdout
    shown = bloge("config", cwd=project)
    assert "bloge.llm.retry.max-attempts = 6  (autopilot)" in shown.stdout
    assert bloge("autopilot", "proposals", cwd=project).stdout.strip() == "no proposals waiting"


def test_one_cannot_approve_ones_own_proposal(project: Path) -> None:
    proposal_id = _propose(project, "attempts", 6, principal=f"user:{getpass.getuser()}")
    refused = bloge("autopilot", "approve", proposal_id, cwd=project)
    assert refused.returncode == 2
    assert "cannot approve it: another principal must" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_an_unknown_proposal_is_a_clear_error(project: Path) -> None:
    missing = bloge("autopilot", "approve", "nosuch", cwd=project)
    assert missing.returncode == 2
    assert "no pending proposal 'nosuch'" in missing.stderr


def test_a_rejection_is_audited_and_the_chain_verifies(project: Path) -> None:
    proposal_id = _propose(project, "attempts", 6, principal="agent:ops")
    rejected = bloge("autopilot", "reject", proposal_id, "--reason", "not today", cwd=project)
    assert rejected.returncode == 0, rejected.stderr
    audit = bloge("autopilot", "audit", cwd=project).stdout.splitlines()
    assert " proposed attempts 4 -> 6 " in audit[0]
    assert f"rejected attempts 4 -> 6 [proposal {proposal_id}] by user:" in audit[1]
    assert audit[1].endswith(": not today")
    verified = bloge("autopilot", "audit", "--verify", cwd=project)
    assert verified.returncode == 0
    assert "the audit chain verifies: 2 records" in verified.stdout


def test_audit_verify_finds_an_edited_record(project: Path) -> None:
    _propose(project, "attempts", 6, principal="agent:ops")
    with sqlite3.connect(project / "var" / "bloge.db") as connection:
        connection.execute("UPDATE bloge_audit SET principal = 'user:alice'")
    verified = bloge("autopilot", "audit", "--verify", "--json", cwd=project)
    assert verified.returncode == 1
    assert json.loads(verified.stdout)["problems"] == [
        "record #1 was edited (its hash no longer matches)"]


def test_knobs_lists_the_bound_settings(project: Path) -> None:
    shown = bloge("autopilot", "knobs", cwd=project)
    assert shown.returncode == 0, shown.stderr
    assert "attempts                 dangerous 4 in [1, 6]  -> bloge.llm.retry.max-attempts" in (
        shown.stdout)


def test_a_binding_that_names_no_setting_is_a_configuration_error(project: Path) -> None:
    settings = project / "settings.yaml"
    settings.write_text(settings.read_text().replace("llm.retry.max-attempts", "llm.retry.x"))
    failed = bloge("autopilot", "knobs", cwd=project)
    assert failed.returncode == 2
    assert "bloge.autopilot.knobs.attempts.binding is 'llm.retry.x'" in failed.stderr


def test_the_ops_agent_changes_a_whitelisted_knob_and_proposes_a_dangerous_one(
        app: Path) -> None:
    changed = bloge("run", "opsAgent", "Propose supportConcurrency 1 because tool errors rose",
                    cwd=app)
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.strip() == "supportConcurrency is now 1; it was 2."
    proposed = bloge("run", "opsAgent", "Propose supportMaxTurns 10 because questions are long",
                     cwd=app)
    assert "it is pending human approval (bloge autopilot approve " in proposed.stdout
    shown = bloge("config", cwd=app).stdout
    assert "bloge.agents.customerSupport.max-tool-concurrency = 1  (autopilot)" in shown
    assert "bloge.agents.customerSupport.max-turns" not in shown

