"""What the autopilot decides about a proposed value: ``Applied | Proposed | Rejected``."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from bloge.core.errors import BlogeError


@dataclass(frozen=True, slots=True)
class Applied:
    """``name`` now has ``value``. ``clamped_from`` is what was asked when the value was
    clamped to the knob's bounds or step; ``proposal_id`` names the approved proposal;
    ``rolled_back`` says the change undid one that made the error rate worse."""

    name: str
    value: float
    clamped_from: float | None = None
    _: KW_ONLY
    previous: float | None = None
    proposal_id: str | None = None
    rolled_back: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"decision": "applied", "name": self.name, "value": self.value,
                "clamped_from": self.clamped_from, "previous": self.previous,
                "proposal_id": self.proposal_id, "rolled_back": self.rolled_back}


@dataclass(frozen=True, slots=True)
class Proposed:
    """A change of ``name`` to ``value`` waits for a human's approval, as ``proposal_id``,
    until ``expires_at`` (POSIX time)."""

    name: str
    value: float
    clamped_from: float | None = None
    _: KW_ONLY
    proposal_id: str = ""
    expires_at: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {"decision": "proposed", "name": self.name, "value": self.value,
                "clamped_from": self.clamped_from, "proposal_id": self.proposal_id,
                "expires_at": self.expires_at, "status": "pending human approval"}


@dataclass(frozen=True, slots=True)
class Rejected:
    """Nothing changed. ``code``: ``unknown_knob``, ``invalid_value``, ``cooldown``,
    ``unchanged``, ``dry_run`` (what would have happened is in ``reason``)."""

    name: str
    reason: str
    _: KW_ONLY
    code: str = "policy"

    def to_dict(self) -> dict[str, object]:
        return {"decision": "rejected", "name": self.name, "reason": self.reason,
                "code": self.code}


Decision = Applied | Proposed | Rejected


class AutopilotError(BlogeError):
    """A request the autopilot cannot carry out."""


class ProposalNotFoundError(AutopilotError, LookupError):
    """No proposal has the id asked for."""


class ApprovalRefusedError(AutopilotError):
    """A proposal cannot be approved or rejected: ``code`` is ``decided`` (already approved,
    rejected or expired), ``expired``, ``self_approval`` or ``conflict`` (the knob changed
    since it was proposed)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
