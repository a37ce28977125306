"""The autopilot as tools for agents: ``listKnobs`` and ``proposeKnobChange`` — an agent
watches and proposes, and never sets anything itself.

A proposal goes through the same guardrails as any other: a dangerous knob's change comes
back to the model as ``"pending human approval"``, an unknown knob or a bad value as a
rejection with its reason (never an exception: the model reads it and carries on).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar, TypedDict

from bloge.autopilot.audit import on_behalf_of
from bloge.autopilot.autopilot import Autopilot
from bloge.autopilot.decisions import AutopilotError
from bloge.core.context import OperatorContext
from bloge.core.operator import OperatorMetadata

#: The names the container registers the operators under.
LIST_KNOBS = "listKnobs"
PROPOSE_KNOB_CHANGE = "proposeKnobChange"

Source = Autopilot | Callable[[], Autopilot]


class ProposeKnobChangeInput(TypedDict):
    """``proposeKnobChange``'s arguments."""

    name: str
    value: float
    reason: str


def _resolved(source: Source) -> Autopilot:
    return source if isinstance(source, Autopilot) else source()


class ListKnobsOperator:
    """Every knob: name, tier, bounds, current value, step, cooldown, the setting it drives."""

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint="List the tuning knobs you may propose changes to, with their tier "
                    "(whitelist: applied at once; dangerous: needs a human's approval), "
                    "bounds and current values.",
        usage_example="{}", idempotent=True)

    def __init__(self, autopilot: Source) -> None:
        self._autopilot = autopilot

    async def execute(self, input: dict[str, Any],
                      ctx: OperatorContext | None = None) -> list[dict[str, object]]:
        pilot = _resolved(self._autopilot)
        await pilot.arefresh()
        return [knob.to_dict() for knob in pilot.knobs()]


class ProposeKnobChangeOperator:
    """Propose a new value for a knob; the answer is the autopilot's decision: ``applied``,
    ``proposed`` (pending human approval) or ``rejected`` with the reason. ``principal`` names
    the agent. A run made for someone (``ctx.principal``: a server's request with an API key)
    proposes on their behalf, recorded as ``"<their principal> via <agent>"``: the four-eyes
    rule counts them as the proposer, so they cannot approve what they had the agent propose.
    Without one, the proposal is the agent's own."""

    metadata: ClassVar[OperatorMetadata] = OperatorMetadata(
        prompt_hint="Propose a new value for a tuning knob, with your reason. Whitelisted "
                    "knobs change at once (clamped to their bounds and step); dangerous ones "
                    "wait for a human's approval.",
        usage_example='{"name": "supportConcurrency", "value": 4, "reason": "tool errors '
                      'rose to 30%"}',
        constraints_description="Only knobs listKnobs shows; values within their bounds.")

    def __init__(self, autopilot: Source, *, principal: str = "agent") -> None:
        self._autopilot = autopilot
        self.principal = principal

    async def execute(self, input: ProposeKnobChangeInput,
                      ctx: OperatorContext | None = None) -> dict[str, object]:
        value: object = input.get("value")
        if isinstance(value, str):
            with contextlib.suppress(ValueError):  # else text: the autopilot rejects it
                value = float(value)
        asking = ctx.principal if ctx is not None else None
        proposer = self.principal if asking is None else on_behalf_of(asking.name,
                                                                       self.principal)
        try:
            decision = await _resolved(self._autopilot).apropose(
                str(input.get("name", "")), value,  # type: ignore[arg-type]  # checked there
                principal=proposer, reason=str(input.get("reason") or ""))
        except AutopilotError as exc:
            return {"decision": "rejected", "reason": str(exc)}
        return decision.to_dict()
