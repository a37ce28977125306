"""The autopilot's decisions as pure functions of its state and the time: a :class:`Plan`
says what to write, what to answer and what changes; :class:`~bloge.autopilot.Autopilot`
commits it (to its audit chain or the store) and only then applies it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bloge.autopilot.audit import (
    AuditEntry,
    AutopilotCommit,
    KnobProposal,
    KnobWrite,
    ProposalDecision,
    requester,
)
from bloge.autopilot.decisions import (
    Applied,
    ApprovalRefusedError,
    Decision,
    ProposalNotFoundError,
    Proposed,
    Rejected,
)
from bloge.autopilot.knobs import Knob, KnobTier, is_number
from bloge.autopilot.watch import Bake, Watch

#: Who the error-rate loop acts as.
ERROR_RATE_PRINCIPAL = "autopilot:error-rate"


@dataclass(frozen=True, slots=True)
class Plan:
    """One decision before it is committed: what to write, what to answer, what changes."""

    commit: AutopilotCommit
    decision: Decision | None
    value: tuple[str, float] | None = None
    proposal: KnobProposal | None = None
    error: Exception | None = None
    bake: tuple[str, Bake] | None = None


@dataclass
class Policy:
    """The knobs, their proposals and timers, and the rules that decide about them."""

    auto_execute_whitelist: bool
    proposal_ttl: float
    hold: float
    recovery_ratio: float
    principal: str
    new_id: Callable[[], str]
    knobs_by_name: dict[str, Knob] = field(default_factory=dict)
    declared: dict[str, float] = field(default_factory=dict)
    """The value each knob was registered with: where the error-rate loop relaxes back to."""
    changed_at: dict[str, float] = field(default_factory=dict)
    proposals: dict[str, KnobProposal] = field(default_factory=dict)
    watches: dict[str, Watch] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def plan_proposal(self, name: str, value: float, principal: str, reason: str,
                      now: float) -> Plan:
        knob = self.knobs_by_name.get(name)
        if knob is None:
            return self.rejection(name, value, principal, "unknown_knob",
                                  f"unknown knob {name!r}", now)
        if not is_number(value):
            return self.rejection(name, value, principal, "invalid_value",
                                  f"the value must be a finite number, got "
                                  f"{_shown(value)}", now)
        value = float(value)
        if knob.integer and not value.is_integer():
            return self.rejection(name, value, principal, "invalid_value",
                                  f"{knob.setting} takes whole numbers, got {value:g}", now)
        wait = self.cooldown_left(knob, now)
        if wait > 0:
            return self.rejection(name, value, principal, "cooldown",
                                  f"cooldown: knob {name!r} changed less than "
                                  f"{knob.cooldown:g}s ago; wait {wait:.0f}s", now)
        target = _clamped(knob, value)
        clamped = None if target == value else value
        if target == knob.value:
            return self.rejection(name, value, principal, "unchanged",
                                  f"knob {name!r} is already {knob.value:g}", now)
        entry = AuditEntry(now, "applied", name, principal, target, knob.value, clamped,
                           reason=reason)
        if knob.tier is KnobTier.DANGEROUS or not self.auto_execute_whitelist:
            return self.plan_pending(knob, entry)
        if knob.mode == "dry-run":
            return self.dry_run(entry, f"would apply {target:g}")
        write = KnobWrite(name, target, knob.value, knob.setting, now)
        return Plan(AutopilotCommit((entry,), knob=write),
                    Applied(name, target, clamped, previous=knob.value), (name, target))

    def plan_pending(self, knob: Knob, entry: AuditEntry) -> Plan:
        value = entry.value
        assert value is not None
        if knob.mode == "dry-run":
            return self.dry_run(entry, f"would propose {entry.value:g} for approval")
        proposal = KnobProposal(self.new_id(), knob.name, value, knob.value,
                                entry.principal, entry.reason, entry.at,
                                entry.at + self.proposal_ttl, entry.clamped_from)
        entry = replace(entry, event="proposed", proposal_id=proposal.id)
        decision = Proposed(knob.name, value, entry.clamped_from,
                            proposal_id=proposal.id, expires_at=proposal.expires_at)
        return Plan(AutopilotCommit((entry,), proposal=proposal), decision,
                    proposal=proposal)

    def dry_run(self, entry: AuditEntry, would: str) -> Plan:
        clamped = "" if entry.clamped_from is None else f" (clamped from {entry.clamped_from:g})"
        reason = f"dry-run: {would}{clamped}"
        entry = replace(entry, event="dry_run", reason=reason)
        return Plan(AutopilotCommit((entry,)), Rejected(entry.knob, reason, code="dry_run"))

    def plan_verdict(self, proposal_id: str, status: str, principal: str, reason: str,
                     now: float) -> Plan:
        proposal = self.proposals.get(proposal_id)
        if proposal is None:
            raise ProposalNotFoundError(f"no pending proposal {proposal_id!r}")
        if proposal.status != "pending":
            raise ApprovalRefusedError("decided", f"proposal {proposal_id!r} is already "
                                       f"{proposal.status}")
        if proposal.expires_at < now:
            plan = self.plan_expiry(proposal, now)
            return replace(plan, error=ApprovalRefusedError(
                "expired", f"proposal {proposal_id!r} has expired"))
        knob = self.knobs_by_name[proposal.knob]
        entry = AuditEntry(now, status, knob.name, principal, proposal.value, proposal.previous,
                           proposal.clamped_from, proposal_id, reason)
        decided = ProposalDecision(proposal_id, status, principal, now)
        if status == "rejected":
            return Plan(AutopilotCommit((entry,), decision=decided),
                        Rejected(knob.name, reason or f"rejected by {principal}",
                                 code="rejected"),
                         proposal=replace(proposal, status=status, decided_by=principal,
                                          decided_at=now))
        if requester(principal) == requester(proposal.proposer):
            raise ApprovalRefusedError("self_approval", f"{proposal.proposer!r} proposed "
                                       f"{proposal_id!r}, so {principal!r} cannot approve "
                                       "it: another principal must")
        if knob.value != proposal.previous:
            raise ApprovalRefusedError("conflict", f"knob {knob.name!r} changed since "
                                       f"{proposal_id!r} was proposed (it is {knob.value:g} "
                                       f"now, not {proposal.previous:g}); propose again")
        write = KnobWrite(knob.name, proposal.value, proposal.previous, knob.setting, now)
        return Plan(AutopilotCommit((entry,), knob=write, decision=decided),
                    Applied(knob.name, proposal.value, proposal.clamped_from,
                            previous=proposal.previous, proposal_id=proposal_id),
                     (knob.name, proposal.value),
                     proposal=replace(proposal, status=status, decided_by=principal,
                                      decided_at=now))

    def expiry_of(self, proposal: KnobProposal) -> Callable[[float], Plan]:
        return lambda now: self.plan_expiry(proposal, now)

    def plan_expiry(self, proposal: KnobProposal, now: float) -> Plan:
        entry = AuditEntry(now, "expired", proposal.knob, self.principal, proposal.value,
                           proposal.previous, proposal.clamped_from, proposal.id,
                           f"not approved within {self.proposal_ttl:g}s")
        return Plan(AutopilotCommit((entry,), decision=ProposalDecision(
            proposal.id, "expired", self.principal, now)), None,
            proposal=replace(proposal, status="expired", decided_by=self.principal,
                             decided_at=now))

    def plan_observation(self, name: str, rate: float, threshold: float,
                         now: float) -> Plan:
        knob = self.knobs_by_name.get(name)
        if knob is None:
            return self.rejection(name, None, ERROR_RATE_PRINCIPAL, "unknown_knob",
                                  f"unknown knob {name!r}", now)
        watch = self.watches.setdefault(name, Watch())
        baking = watch.bake
        move = watch.observe(rate, threshold, threshold * self.recovery_ratio,
                             hold=self.hold, now=now)
        if move is None:
            return Plan(AutopilotCommit(()), None)
        if move == "rollback":
            assert baking is not None
            return self.plan_rollback(knob, baking.previous, rate, now)
        step = knob.max_step or (knob.max - knob.min) / 10
        declared = self.declared[name]
        if move == "decrease":
            target, why = knob.value - step, f"error rate {rate:g} above {threshold:g}"
        else:
            target = min(knob.value + step, max(declared, knob.value))
            why = f"error rate {rate:g} below {threshold * self.recovery_ratio:g}"
        if knob.integer:
            target = float(round(target))
        if target == knob.value or (move == "increase" and knob.value >= declared):
            return Plan(AutopilotCommit(()), None)
        plan = self.plan_proposal(name, target, ERROR_RATE_PRINCIPAL,
                                  f"{why} for {self.hold:g}s", now)
        if isinstance(plan.decision, Applied) and knob.bake is not None:
            return replace(plan, bake=(name, Bake(now + knob.bake, knob.value, rate)))
        return plan

    def plan_rollback(self, knob: Knob, previous: float, rate: float, now: float) -> Plan:
        entry = AuditEntry(now, "rolled_back", knob.name, ERROR_RATE_PRINCIPAL, previous,
                           knob.value, reason=f"error rate {rate:g} got worse during the bake")
        write = KnobWrite(knob.name, previous, knob.value, knob.setting, now)
        return Plan(AutopilotCommit((entry,), knob=write),
                    Applied(knob.name, previous, previous=knob.value, rolled_back=True),
                     (knob.name, previous))

    def rejection(self, name: str, value: object, principal: str, code: str, reason: str,
                  now: float) -> Plan:
        shown = float(value) if is_number(value) else None  # type: ignore[arg-type]  # is_number checked it
        entry = AuditEntry(now, "rejected", name, principal, shown, reason=reason)
        return Plan(AutopilotCommit((entry,)), Rejected(name, reason, code=code))

    def cooldown_left(self, knob: Knob, now: float) -> float:
        changed = self.changed_at.get(knob.name)
        if knob.cooldown is None or changed is None:
            return 0.0
        return changed + knob.cooldown - now

    def pending(self) -> list[KnobProposal]:
        with self.lock:
            return sorted((p for p in self.proposals.values() if p.status == "pending"),
                          key=lambda p: (p.created_at, p.id))


def _clamped(knob: Knob, value: float) -> float:
    target = min(max(value, knob.min), knob.max)
    if knob.max_step is not None and abs(target - knob.value) > knob.max_step:
        target = knob.value + (knob.max_step if target > knob.value else -knob.max_step)
    if knob.integer:
        target = float(int(target))
    return min(max(target, knob.min), knob.max)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
