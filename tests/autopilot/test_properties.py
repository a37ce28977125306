"""Properties of every sequence of decisions (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bloge.autopilot import (
    Applied,
    ApprovalRefusedError,
    Autopilot,
    Knob,
    KnobTier,
    Proposed,
    Rejected,
)
from bloge.autopilot.audit import verify_chain
from tests.autopilot.conftest import FakeClock

NAMES = ["safe", "risky", "unknown"]
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-100, 100),
                   st.text(max_size=3), st.none(), st.booleans())
principals = st.sampled_from(["ops", "alice", "bob"])
actions = st.lists(st.one_of(
    st.tuples(st.just("propose"), st.sampled_from(NAMES), values, principals),
    st.tuples(st.just("approve"), st.integers(0, 5), principals),
    st.tuples(st.just("wait"), st.floats(0, 100)),
), max_size=30)


def _autopilot(clock: FakeClock) -> Autopilot:
    autopilot = Autopilot(clock=clock, proposal_ttl=150)
    autopilot.register_knob(Knob("safe", KnobTier.WHITELIST, -5, 20, 3, max_step=4,
                                 cooldown=10))
    autopilot.register_knob(Knob("risky", KnobTier.DANGEROUS, 0, 10, 5))
    return autopilot


@settings(max_examples=200, deadline=None)
@given(actions)
def test_every_sequence_keeps_the_guardrails(steps: list[tuple[object, ...]]) -> None:
    clock = FakeClock()
    autopilot = _autopilot(clock)
    proposed: list[Proposed] = []
    decisions = 0
    for step in steps:
        if step[0] == "wait":
            clock.advance(float(step[1]))  # type: ignore[arg-type]  # the strategy's float
            continue
        if step[0] == "propose":
            _, name, value, principal = step
            before = autopilot.knob(str(name)).value if name != "unknown" else None
            decision = autopilot.propose(str(name), value, principal=str(principal))  # type: ignore[arg-type]  # any value
            decisions += 1
            if name == "unknown":
                assert isinstance(decision, Rejected)
            if isinstance(decision, Applied):
                knob = autopilot.knob(str(name))
                assert name == "safe"  # never a dangerous knob without approval
                assert knob.min <= decision.value <= knob.max
                assert before is not None
                assert abs(decision.value - before) <= 4
            if isinstance(decision, Proposed):
                proposed.append(decision)
            continue
        _, index, principal = step
        if not proposed:
            continue
        chosen = proposed[int(index) % len(proposed)]  # type: ignore[call-overload]  # an int
        proposer = autopilot.proposal(chosen.proposal_id).proposer
        audited = len(autopilot.audit_records())
        try:
            applied = autopilot.approve(chosen.proposal_id, principal=str(principal))
        except ApprovalRefusedError as refused:
            expired = len(autopilot.audit_records()) - audited
            assert expired == (1 if refused.code == "expired" else 0)  # noqa: PT017 -- a property over many refusals, not one expected raise
            decisions += expired
            continue
        decisions += 1
        assert principal != proposer
        assert applied.value == autopilot.knob(chosen.name).value
    records = autopilot.audit_records()
    assert len(records) == decisions
    assert verify_chain(records, (records[-1].seq, records[-1].hash) if records else (0, "")).ok
