"""The chapter's surface: clamp, then decide by tier; guardrails; approvals; the audit."""

from __future__ import annotations

import math

import pytest

from bloge.autopilot import (
    Applied,
    ApprovalRefusedError,
    Autopilot,
    Knob,
    KnobTier,
    ProposalNotFoundError,
    Proposed,
    Rejected,
)
from bloge.core.errors import BlogeUsageError
from tests.autopilot.conftest import FakeClock, RecordingBinding


def _autopilot(clock: FakeClock, **options: object) -> Autopilot:
    autopilot = Autopilot(clock=clock, **options)  # type: ignore[arg-type]  # test options
    autopilot.register_knob(Knob("concurrency", KnobTier.WHITELIST, 1, 16, 4))
    autopilot.register_knob(Knob("turns", KnobTier.DANGEROUS, 1, 50, 10))
    return autopilot


def test_a_whitelisted_knob_is_applied(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    assert autopilot.propose("concurrency", 8) == Applied("concurrency", 8.0, previous=4.0)
    assert autopilot.knob("concurrency").value == 8.0


def test_a_value_out_of_bounds_is_clamped_and_says_so(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    decision = autopilot.propose("concurrency", 99)
    assert decision == Applied("concurrency", 16.0, 99.0, previous=4.0)
    assert "(clamped from 99)" in autopilot.audit_log()[0]


def test_a_dangerous_knob_is_only_proposed(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    decision = autopilot.propose("turns", 20)
    assert isinstance(decision, Proposed)
    assert decision.expires_at == clock.now + 3600
    assert autopilot.knob("turns").value == 10
    assert [p.id for p in autopilot.proposals()] == [decision.proposal_id]


def test_without_auto_execution_whitelisted_knobs_are_proposed(clock: FakeClock) -> None:
    decision = _autopilot(clock, auto_execute_whitelist=False).propose("concurrency", 8)
    assert isinstance(decision, Proposed)


def test_an_unknown_knob_is_rejected(clock: FakeClock) -> None:
    decision = _autopilot(clock).propose("nope", 1)
    assert decision == Rejected("nope", "unknown knob 'nope'", code="unknown_knob")


@pytest.mark.parametrize("value", ["8", math.nan, math.inf, True, None])
def test_a_value_that_is_not_a_finite_number_is_rejected(clock: FakeClock,
                                                           value: object) -> None:
    autopilot = _autopilot(clock)
    decision = autopilot.propose("concurrency", value)  # type: ignore[arg-type]  # bad input
    assert isinstance(decision, Rejected)
    assert decision.code == "invalid_value"
    assert autopilot.knob("concurrency").value == 4


def test_an_integer_setting_refuses_fractions(clock: FakeClock) -> None:
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4,
                                 binding=RecordingBinding(integer=True)))
    assert autopilot.propose("c", 2.5) == Rejected(
        "c", "bloge.test.knob takes whole numbers, got 2.5", code="invalid_value")


def test_a_change_larger_than_the_step_is_clamped_to_it(clock: FakeClock) -> None:
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4, max_step=2))
    assert autopilot.propose("c", 12) == Applied("c", 6.0, 12.0, previous=4.0)
    assert autopilot.propose("c", 1) == Applied("c", 4.0, 1.0, previous=6.0)


def test_a_proposal_during_the_cooldown_is_rejected(clock: FakeClock) -> None:
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4, cooldown=60))
    autopilot.propose("c", 5)
    clock.advance(30)
    decision = autopilot.propose("c", 6)
    assert isinstance(decision, Rejected)
    assert decision.code == "cooldown"
    clock.advance(30)
    assert isinstance(autopilot.propose("c", 6), Applied)


def test_dry_run_records_what_would_happen_and_changes_nothing(clock: FakeClock) -> None:
    binding = RecordingBinding()
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4, mode="dry-run",
                                 binding=binding))
    decision = autopilot.propose("c", 20)
    assert decision == Rejected("c", "dry-run: would apply 16 (clamped from 20)",
                                code="dry_run")
    assert binding.applied == [4]
    assert "dry_run c 4 -> 16 (clamped from 20)" in autopilot.audit_log()[0]


def test_an_applied_value_reaches_the_binding(clock: FakeClock) -> None:
    binding = RecordingBinding()
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4, binding=binding))
    autopilot.propose("c", 9)
    assert binding.applied == [4, 9]


def test_another_principal_approves_and_the_change_applies(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    proposed = autopilot.propose("turns", 20, principal="ops-agent")
    assert isinstance(proposed, Proposed)
    applied = autopilot.approve(proposed.proposal_id, principal="alice")
    assert applied == Applied("turns", 20.0, previous=10.0, proposal_id=proposed.proposal_id)
    assert autopilot.knob("turns").value == 20
    assert autopilot.proposals() == []


def test_the_proposer_cannot_approve_their_own_proposal(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    proposed = autopilot.propose("turns", 20, principal="alice")
    assert isinstance(proposed, Proposed)
    with pytest.raises(ApprovalRefusedError, match="cannot approve it") as refused:
        autopilot.approve(proposed.proposal_id, principal="alice")
    assert refused.value.code == "self_approval"
    assert autopilot.knob("turns").value == 10


def test_an_expired_proposal_cannot_be_approved_and_its_expiry_is_audited(
        clock: FakeClock) -> None:
    autopilot = _autopilot(clock, proposal_ttl=60)
    proposed = autopilot.propose("turns", 20)
    assert isinstance(proposed, Proposed)
    clock.advance(61)
    with pytest.raises(ApprovalRefusedError, match="expired"):
        autopilot.approve(proposed.proposal_id, principal="alice")
    assert " expired turns " in autopilot.audit_log()[-1]
    with pytest.raises(ApprovalRefusedError, match="already expired"):
        autopilot.approve(proposed.proposal_id, principal="alice")


def test_a_decided_proposal_cannot_be_decided_again(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    proposed = autopilot.propose("turns", 20)
    assert isinstance(proposed, Proposed)
    autopilot.reject(proposed.proposal_id, principal="alice", reason="not now")
    with pytest.raises(ApprovalRefusedError, match="already rejected"):
        autopilot.approve(proposed.proposal_id, principal="bob")
    assert autopilot.knob("turns").value == 10


def test_approving_a_proposal_whose_knob_changed_since_is_refused(clock: FakeClock) -> None:
    autopilot = _autopilot(clock, auto_execute_whitelist=False)
    first = autopilot.propose("turns", 20)
    second = autopilot.propose("turns", 30)
    assert isinstance(first, Proposed)
    assert isinstance(second, Proposed)
    autopilot.approve(first.proposal_id, principal="alice")
    with pytest.raises(ApprovalRefusedError) as refused:
        autopilot.approve(second.proposal_id, principal="alice")
    assert refused.value.code == "conflict"


def test_the_audit_log_has_one_line_per_decision(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    autopilot.propose("concurrency", 99, principal="ops")
    autopilot.propose("nope", 1)
    lines = autopilot.audit_log()
    assert len(lines) == 2
    assert lines[0].startswith("#1 ")
    assert "applied concurrency 4 -> 16 (clamped from 99) by ops" in lines[0]
    assert "rejected nope" in lines[1]


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"min": 5, "max": 1, "value": 3}, "min 5 is more than max 1"),
    ({"min": 1, "max": 5, "value": 7}, r"value 7 is outside \[1, 5\]"),
    ({"min": 0, "max": 10, "value": math.nan}, "finite number"),
    ({"min": 0, "max": 10, "value": 1, "max_step": 0}, "max_step"),
    ({"min": 0, "max": 10, "value": 1, "mode": "warn"}, "mode"),
])
def test_a_malformed_knob_is_a_usage_error(arguments: dict[str, object], problem: str) -> None:
    with pytest.raises(BlogeUsageError, match=problem):
        Knob("k", KnobTier.WHITELIST, **arguments)  # type: ignore[arg-type]  # bad input


def test_a_knob_name_is_registered_once(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    with pytest.raises(BlogeUsageError, match="already registered"):
        autopilot.register_knob(Knob("turns", KnobTier.WHITELIST, 1, 2, 1))


def test_an_unknown_proposal_id_is_not_found(clock: FakeClock) -> None:
    with pytest.raises(ProposalNotFoundError, match="no pending proposal 'x'"):
        _autopilot(clock).approve("x", principal="alice")


def test_every_decision_also_goes_to_the_journal(clock: FakeClock) -> None:
    from bloge.journal import EventJournal, InMemorySink  # noqa: PLC0415 -- this test's only

    sink = InMemorySink()
    journal = EventJournal(sink)
    autopilot = Autopilot(clock=clock, journal=journal)
    autopilot.register_knob(Knob("c", KnobTier.WHITELIST, 1, 16, 4))
    autopilot.propose("c", 99, principal="ops")
    journal.flush()
    (event,) = sink.events
    assert (event["event"], event["decision"], event["knob"], event["value"],
            event["clamped_from"], event["principal"], event["audit_seq"]) == (
        "autopilot_decision", "applied", "c", 16.0, 99.0, "ops", 1)
