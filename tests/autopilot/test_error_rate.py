"""The error-rate loop: a hold period, hysteresis, a bake period with rollback."""

from __future__ import annotations

from bloge.autopilot import ERROR_RATE_PRINCIPAL, Applied, Autopilot, Knob, KnobTier, Rejected
from tests.autopilot.conftest import FakeClock


def _autopilot(clock: FakeClock, *, bake: float | None = None) -> Autopilot:
    autopilot = Autopilot(clock=clock, hold=30)
    autopilot.register_knob(Knob("concurrency", KnobTier.WHITELIST, 1, 16, 8, max_step=2,
                                 bake=bake))
    return autopilot


def test_a_rate_past_the_threshold_acts_only_after_the_hold(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    assert autopilot.observe_error_rate("concurrency", 0.4, 0.2) is None
    clock.advance(20)
    assert autopilot.observe_error_rate("concurrency", 0.4, 0.2) is None
    clock.advance(10)
    decision = autopilot.observe_error_rate("concurrency", 0.4, 0.2)
    assert decision == Applied("concurrency", 6.0, previous=8.0)
    assert f"by {ERROR_RATE_PRINCIPAL}" in autopilot.audit_log()[-1]


def test_a_dip_below_the_threshold_restarts_the_hold(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    autopilot.observe_error_rate("concurrency", 0.4, 0.2)
    clock.advance(20)
    autopilot.observe_error_rate("concurrency", 0.15, 0.2)
    clock.advance(20)
    assert autopilot.observe_error_rate("concurrency", 0.4, 0.2) is None


def test_it_relaxes_only_below_the_recovery_threshold(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    autopilot.observe_error_rate("concurrency", 0.4, 0.2)
    clock.advance(30)
    autopilot.observe_error_rate("concurrency", 0.4, 0.2)
    for _ in range(3):  # between recovery (0.1) and the threshold: no flapping back
        clock.advance(30)
        assert autopilot.observe_error_rate("concurrency", 0.15, 0.2) is None
    autopilot.observe_error_rate("concurrency", 0.05, 0.2)
    clock.advance(30)
    assert autopilot.observe_error_rate("concurrency", 0.05, 0.2) == Applied(
        "concurrency", 8.0, previous=6.0)
    clock.advance(30)
    assert autopilot.observe_error_rate("concurrency", 0.05, 0.2) is None  # back where declared


def test_a_worse_rate_during_the_bake_rolls_the_change_back(clock: FakeClock) -> None:
    autopilot = _autopilot(clock, bake=120)
    autopilot.observe_error_rate("concurrency", 0.3, 0.2)
    clock.advance(30)
    assert autopilot.observe_error_rate("concurrency", 0.3, 0.2) == Applied(
        "concurrency", 6.0, previous=8.0)
    clock.advance(10)
    decision = autopilot.observe_error_rate("concurrency", 0.5, 0.2)
    assert decision == Applied("concurrency", 8.0, previous=6.0, rolled_back=True)
    assert " rolled_back concurrency 6 -> 8 " in autopilot.audit_log()[-1]


def test_after_the_bake_a_worse_rate_is_an_ordinary_observation(clock: FakeClock) -> None:
    autopilot = _autopilot(clock, bake=60)
    autopilot.observe_error_rate("concurrency", 0.3, 0.2)
    clock.advance(30)
    autopilot.observe_error_rate("concurrency", 0.3, 0.2)
    clock.advance(61)
    assert autopilot.observe_error_rate("concurrency", 0.5, 0.2) == Applied(
        "concurrency", 4.0, previous=6.0)  # still past the threshold: one more step down


def test_an_unknown_knob_is_rejected(clock: FakeClock) -> None:
    decision = _autopilot(clock).observe_error_rate("nope", 0.5, 0.2)
    assert isinstance(decision, Rejected)
