"""listKnobs and proposeKnobChange: what a model sees of the autopilot."""

from __future__ import annotations

from bloge.autopilot import Autopilot, Knob, KnobTier
from bloge.autopilot.tools import ListKnobsOperator, ProposeKnobChangeOperator
from tests.autopilot.conftest import FakeClock


def _autopilot(clock: FakeClock) -> Autopilot:
    autopilot = Autopilot(clock=clock)
    autopilot.register_knob(Knob("cap", KnobTier.WHITELIST, 1, 8, 2))
    autopilot.register_knob(Knob("turns", KnobTier.DANGEROUS, 1, 20, 6))
    return autopilot


async def test_list_knobs_shows_tiers_bounds_and_values(clock: FakeClock) -> None:
    listed = await ListKnobsOperator(_autopilot(clock)).execute({})
    assert [(k["name"], k["tier"], k["value"]) for k in listed] == [
        ("cap", "whitelist", 2.0), ("turns", "dangerous", 6.0)]


async def test_a_dangerous_proposal_comes_back_pending_human_approval(clock: FakeClock) -> None:
    autopilot = _autopilot(clock)
    tool = ProposeKnobChangeOperator(autopilot, principal="agent:ops")
    answer = await tool.execute({"name": "turns", "value": 10, "reason": "long questions"})
    assert answer["status"] == "pending human approval"
    assert autopilot.knob("turns").value == 6
    assert autopilot.proposals()[0].proposer == "agent:ops"


async def test_a_number_given_as_text_is_read_and_other_text_rejected(clock: FakeClock) -> None:
    tool = ProposeKnobChangeOperator(_autopilot(clock))
    assert (await tool.execute({"name": "cap", "value": "4", "reason": ""}))["value"] == 4.0  # type: ignore[typeddict-item]  # a model's text
    rejected = await tool.execute({"name": "cap", "value": "lots", "reason": ""})  # type: ignore[typeddict-item]  # a model's text
    assert rejected["decision"] == "rejected"
    assert rejected["code"] == "invalid_value"


async def test_an_unknown_knob_is_a_rejection_the_model_can_read(clock: FakeClock) -> None:
    answer = await ProposeKnobChangeOperator(_autopilot(clock)).execute(
        {"name": "speed", "value": 1, "reason": ""})
    assert answer == {"decision": "rejected", "name": "speed",
                      "reason": "unknown knob 'speed'", "code": "unknown_knob"}
