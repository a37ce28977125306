"""``Autopilot``: agents propose knob changes, tiered guardrails decide, every decision is
audited before it takes effect."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bloge.agent.loop.sync import run_sync
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
from bloge.core.errors import BlogeUsageError
from bloge.store.audit import (
    AuditEntry,
    AuditRecord,
    AutopilotCommit,
    CommitRefusedError,
    KnobProposal,
    KnobWrite,
    ProposalDecision,
    chained,
)
from bloge.store.errors import StoreNotFoundError

if TYPE_CHECKING:
    from bloge.store import Store

T = TypeVar("T")
_log = logging.getLogger("bloge.autopilot")
#: Who the error-rate loop acts as.
ERROR_RATE_PRINCIPAL = "autopilot:error-rate"


class Journal(Protocol):
    """Where decisions are also told (an :class:`~bloge.journal.EventJournal`)."""

    def emit(self, event: str, /, **fields: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class _Plan:
    """One decision before it is committed: what to write, what to answer, what changes."""

    commit: AutopilotCommit
    decision: Decision | None
    value: tuple[str, float] | None = None
    proposal: KnobProposal | None = None
    error: Exception | None = None
    bake: tuple[str, Bake] | None = None


class Autopilot:
    """Knobs by name, and the decisions about them.

    ``propose(name, value)`` clamps the value to the knob's ``[min, max]`` and its step, then
    decides by tier: a whitelisted knob is applied (with ``auto_execute_whitelist``, else
    proposed), a dangerous one is proposed for another principal to :meth:`approve`, an
    unknown one is rejected. Every decision is appended to the audit chain — in the ``store``
    when there is one, in a transaction with its effect; a decision that cannot be audited
    is not applied (the store's error propagates); each is also logged (logger
    ``bloge.autopilot``) and emitted to ``journal`` as ``autopilot_decision``. ``clock``
    gives POSIX seconds; proposals expire after ``proposal_ttl``; the error-rate loop acts
    after ``hold`` seconds past a threshold and relaxes below ``threshold * recovery_ratio``.

    With a store, the sync methods run on bloge's loop thread; inside an event loop await the
    ``a``-methods. Several processes may share a store: :meth:`arefresh` brings in what the
    others decided.
    """

    def __init__(self, auto_execute_whitelist: bool = True, *,  # noqa: FBT001, FBT002 -- the chapter's signature
                 store: Store | None = None, clock: Callable[[], float] = time.time,
                 proposal_ttl: float = 3600.0, hold: float = 60.0,
                 recovery_ratio: float = 0.5, principal: str = "autopilot",
                 new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:12],
                 journal: Journal | None = None) -> None:
        if not (is_number(proposal_ttl) and proposal_ttl > 0):
            raise BlogeUsageError(f"proposal_ttl must be a number > 0, got {proposal_ttl!r}")
        if not (is_number(hold) and hold >= 0):
            raise BlogeUsageError(f"hold must be a number >= 0, got {hold!r}")
        if not (is_number(recovery_ratio) and 0 <= recovery_ratio <= 1):
            raise BlogeUsageError(f"recovery_ratio must be in [0, 1], got {recovery_ratio!r}")
        self.auto_execute_whitelist = auto_execute_whitelist
        self.store = store
        self.clock = clock
        self.proposal_ttl = proposal_ttl
        self.hold = hold
        self.recovery_ratio = recovery_ratio
        self.principal = principal
        self._new_id = new_id
        self.journal = journal
        self._knobs: dict[str, Knob] = {}
        self._declared: dict[str, float] = {}
        self._changed_at: dict[str, float] = {}
        self._proposals: dict[str, KnobProposal] = {}
        self._watches: dict[str, Watch] = {}
        self._records: list[AuditRecord] = []
        self._lock = threading.RLock()

    # -- knobs

    def register_knob(self, knob: Knob) -> None:
        """Add ``knob``; its binding takes the knob's value now. A name is registered once."""
        if not isinstance(knob, Knob):
            raise BlogeUsageError(f"register_knob() takes a Knob, got {knob!r}")
        with self._lock:
            if knob.name in self._knobs:
                raise BlogeUsageError(f"a knob named {knob.name!r} is already registered")
            self._knobs[knob.name] = knob
            self._declared[knob.name] = knob.value
        if knob.binding is not None:
            knob.binding.apply(knob.value)

    def knobs(self) -> list[Knob]:
        """The knobs, by name, with their current values."""
        with self._lock:
            return [self._knobs[name] for name in sorted(self._knobs)]

    def knob(self, name: str) -> Knob:
        try:
            return self._knobs[name]
        except KeyError:
            raise BlogeUsageError(f"no knob {name!r} (knobs: "
                                  f"{', '.join(sorted(self._knobs)) or 'none'})") from None

    # -- decisions

    def propose(self, name: str, value: float, *, principal: str | None = None,
                reason: str = "") -> Decision:
        """Decide about ``value`` for knob ``name`` (see the class docs)."""
        return self._sync(self.apropose(name, value, principal=principal, reason=reason),
                          "propose")

    async def apropose(self, name: str, value: float, *, principal: str | None = None,
                       reason: str = "") -> Decision:
        await self.arefresh()  # what other processes decided: cooldowns, values
        decision = await self._execute(
            lambda now: self._plan_proposal(name, value, principal or self.principal,
                                            str(reason), now))
        assert decision is not None  # a proposal always decides
        return decision

    def approve(self, proposal_id: str, *, principal: str) -> Applied:
        """Apply a pending proposal; its proposer cannot approve it
        (:class:`ApprovalRefusedError`, as for one expired, decided, or whose knob changed)."""
        return self._sync(self.aapprove(proposal_id, principal=principal), "approve")

    async def aapprove(self, proposal_id: str, *, principal: str) -> Applied:
        await self._load(proposal_id)
        decision = await self._execute(
            lambda now: self._plan_verdict(proposal_id, "approved", principal, "", now))
        assert isinstance(decision, Applied)
        return decision

    def reject(self, proposal_id: str, *, principal: str, reason: str = "") -> Rejected:
        """Turn a pending proposal down."""
        return self._sync(self.areject(proposal_id, principal=principal, reason=reason),
                          "reject")

    async def areject(self, proposal_id: str, *, principal: str, reason: str = "") -> Rejected:
        await self._load(proposal_id)
        decision = await self._execute(
            lambda now: self._plan_verdict(proposal_id, "rejected", principal, reason, now))
        assert isinstance(decision, Rejected)
        return decision

    def proposals(self) -> list[KnobProposal]:
        """The proposals waiting for approval, oldest first (expired ones are expired)."""
        return self._sync(self.aproposals(), "proposals")

    async def aproposals(self) -> list[KnobProposal]:
        await self.arefresh()
        for proposal in self._pending():
            if proposal.expires_at < self.clock():
                await self._execute(self._expiry_of(proposal))
        return self._pending()

    def observe_error_rate(self, knob_name: str, error_rate: float,
                           threshold: float) -> Decision | None:
        """Turn a measured error rate into a decision: after the rate has stayed above
        ``threshold`` for the hold period, step the knob down (by its ``max_step``, else a
        tenth of its range); after it has stayed below the recovery threshold as long, step
        it back toward its declared value; in between, nothing. During a change's ``bake``,
        a rate worse than when it was made restores the previous value (audited as
        ``rolled_back``). ``None`` when nothing is decided."""
        return self._sync(self.aobserve_error_rate(knob_name, error_rate, threshold),
                          "observe_error_rate")

    async def aobserve_error_rate(self, knob_name: str, error_rate: float,
                                  threshold: float) -> Decision | None:
        if not (is_number(error_rate) and error_rate >= 0):
            raise BlogeUsageError(f"error_rate must be a finite number >= 0, got "
                                  f"{error_rate!r}")
        if not (is_number(threshold) and threshold >= 0):
            raise BlogeUsageError(f"threshold must be a finite number >= 0, got {threshold!r}")
        await self.arefresh()
        return await self._execute(
            lambda now: self._plan_observation(knob_name, error_rate, threshold, now))

    # -- the audit

    def audit_log(self) -> list[str]:
        """Every decision this autopilot made, one line each, oldest first."""
        with self._lock:
            return [str(record) for record in self._records]

    def audit_records(self) -> list[AuditRecord]:
        with self._lock:
            return list(self._records)

    async def arefresh(self) -> None:
        """Take in what the store holds: knob values decided by any process (applied to the
        bindings) and pending proposals. Nothing without a store."""
        if self.store is None:
            return
        values = await self.store.knob_values()
        pending = await self.store.knob_proposals(status="pending")
        with self._lock:
            self._proposals = {p.id: p for p in pending}
            for name, (value, _setting, changed) in values.items():
                knob = self._knobs.get(name)
                if knob is None or not knob.min <= value <= knob.max:
                    continue
                self._changed_at[name] = changed
                if value != knob.value:
                    self._set(knob, value)

    async def _load(self, proposal_id: str) -> None:
        """Refresh, and know ``proposal_id`` even when another process decided it."""
        if self.store is None:
            return
        await self.arefresh()
        if proposal_id not in self._proposals:
            with contextlib.suppress(StoreNotFoundError):
                found = await self.store.knob_proposal(proposal_id)
                with self._lock:
                    self._proposals[proposal_id] = found

    # -- planning (pure: state and time in, a plan out)

    def _plan_proposal(self, name: str, value: float, principal: str, reason: str,
                       now: float) -> _Plan:
        knob = self._knobs.get(name)
        if knob is None:
            return self._rejection(name, value, principal, "unknown_knob",
                                   f"unknown knob {name!r}", now)
        if not is_number(value):
            return self._rejection(name, value, principal, "invalid_value",
                                   f"the value must be a finite number, got "
                                   f"{_shown(value)}", now)
        value = float(value)
        if knob.integer and not value.is_integer():
            return self._rejection(name, value, principal, "invalid_value",
                                   f"{knob.setting} takes whole numbers, got {value:g}", now)
        wait = self._cooldown_left(knob, now)
        if wait > 0:
            return self._rejection(name, value, principal, "cooldown",
                                   f"cooldown: knob {name!r} changed less than "
                                   f"{knob.cooldown:g}s ago; wait {wait:.0f}s", now)
        target = _clamped(knob, value)
        clamped = None if target == value else value
        if target == knob.value:
            return self._rejection(name, value, principal, "unchanged",
                                   f"knob {name!r} is already {knob.value:g}", now)
        entry = AuditEntry(now, "applied", name, principal, target, knob.value, clamped,
                           reason=reason)
        if knob.tier is KnobTier.DANGEROUS or not self.auto_execute_whitelist:
            return self._plan_pending(knob, entry)
        if knob.mode == "dry-run":
            return self._dry_run(entry, f"would apply {target:g}")
        write = KnobWrite(name, target, knob.value, knob.setting, now)
        return _Plan(AutopilotCommit((entry,), knob=write),
                     Applied(name, target, clamped, previous=knob.value), (name, target))

    def _plan_pending(self, knob: Knob, entry: AuditEntry) -> _Plan:
        value = entry.value
        assert value is not None
        if knob.mode == "dry-run":
            return self._dry_run(entry, f"would propose {entry.value:g} for approval")
        proposal = KnobProposal(self._new_id(), knob.name, value, knob.value,
                                entry.principal, entry.reason, entry.at,
                                entry.at + self.proposal_ttl, entry.clamped_from)
        entry = replace(entry, event="proposed", proposal_id=proposal.id)
        decision = Proposed(knob.name, value, entry.clamped_from,
                            proposal_id=proposal.id, expires_at=proposal.expires_at)
        return _Plan(AutopilotCommit((entry,), proposal=proposal), decision,
                     proposal=proposal)

    def _dry_run(self, entry: AuditEntry, would: str) -> _Plan:
        clamped = "" if entry.clamped_from is None else f" (clamped from {entry.clamped_from:g})"
        reason = f"dry-run: {would}{clamped}"
        entry = replace(entry, event="dry_run", reason=reason)
        return _Plan(AutopilotCommit((entry,)), Rejected(entry.knob, reason, code="dry_run"))

    def _plan_verdict(self, proposal_id: str, status: str, principal: str, reason: str,
                      now: float) -> _Plan:
        proposal = self._proposals.get(proposal_id)
        if proposal is None:
            raise ProposalNotFoundError(f"no pending proposal {proposal_id!r}")
        if proposal.status != "pending":
            raise ApprovalRefusedError("decided", f"proposal {proposal_id!r} is already "
                                       f"{proposal.status}")
        if proposal.expires_at < now:
            plan = self._plan_expiry(proposal, now)
            return replace(plan, error=ApprovalRefusedError(
                "expired", f"proposal {proposal_id!r} has expired"))
        knob = self._knobs[proposal.knob]
        entry = AuditEntry(now, status, knob.name, principal, proposal.value, proposal.previous,
                           proposal.clamped_from, proposal_id, reason)
        decided = ProposalDecision(proposal_id, status, principal, now)
        if status == "rejected":
            return _Plan(AutopilotCommit((entry,), decision=decided),
                         Rejected(knob.name, reason or f"rejected by {principal}",
                                  code="rejected"),
                         proposal=replace(proposal, status=status, decided_by=principal,
                                          decided_at=now))
        if principal == proposal.proposer:
            raise ApprovalRefusedError("self_approval", f"{principal!r} proposed "
                                       f"{proposal_id!r} and cannot approve it: another "
                                       "principal must")
        if knob.value != proposal.previous:
            raise ApprovalRefusedError("conflict", f"knob {knob.name!r} changed since "
                                       f"{proposal_id!r} was proposed (it is {knob.value:g} "
                                       f"now, not {proposal.previous:g}); propose again")
        write = KnobWrite(knob.name, proposal.value, proposal.previous, knob.setting, now)
        return _Plan(AutopilotCommit((entry,), knob=write, decision=decided),
                     Applied(knob.name, proposal.value, proposal.clamped_from,
                             previous=proposal.previous, proposal_id=proposal_id),
                     (knob.name, proposal.value),
                     proposal=replace(proposal, status=status, decided_by=principal,
                                      decided_at=now))

    def _expiry_of(self, proposal: KnobProposal) -> Callable[[float], _Plan]:
        return lambda now: self._plan_expiry(proposal, now)

    def _plan_expiry(self, proposal: KnobProposal, now: float) -> _Plan:
        entry = AuditEntry(now, "expired", proposal.knob, self.principal, proposal.value,
                           proposal.previous, proposal.clamped_from, proposal.id,
                           f"not approved within {self.proposal_ttl:g}s")
        return _Plan(AutopilotCommit((entry,), decision=ProposalDecision(
            proposal.id, "expired", self.principal, now)), None,
            proposal=replace(proposal, status="expired", decided_by=self.principal,
                             decided_at=now))

    def _plan_observation(self, name: str, rate: float, threshold: float,
                          now: float) -> _Plan:
        knob = self._knobs.get(name)
        if knob is None:
            return self._rejection(name, None, ERROR_RATE_PRINCIPAL, "unknown_knob",
                                   f"unknown knob {name!r}", now)
        watch = self._watches.setdefault(name, Watch())
        baking = watch.bake
        move = watch.observe(rate, threshold, threshold * self.recovery_ratio,
                             hold=self.hold, now=now)
        if move is None:
            return _Plan(AutopilotCommit(()), None)
        if move == "rollback":
            assert baking is not None
            return self._plan_rollback(knob, baking.previous, rate, now)
        step = knob.max_step or (knob.max - knob.min) / 10
        declared = self._declared[name]
        if move == "decrease":
            target, why = knob.value - step, f"error rate {rate:g} above {threshold:g}"
        else:
            target = min(knob.value + step, max(declared, knob.value))
            why = f"error rate {rate:g} below {threshold * self.recovery_ratio:g}"
        if knob.integer:
            target = float(round(target))
        if target == knob.value or (move == "increase" and knob.value >= declared):
            return _Plan(AutopilotCommit(()), None)
        plan = self._plan_proposal(name, target, ERROR_RATE_PRINCIPAL,
                                   f"{why} for {self.hold:g}s", now)
        if isinstance(plan.decision, Applied) and knob.bake is not None:
            return replace(plan, bake=(name, Bake(now + knob.bake, knob.value, rate)))
        return plan

    def _plan_rollback(self, knob: Knob, previous: float, rate: float, now: float) -> _Plan:
        entry = AuditEntry(now, "rolled_back", knob.name, ERROR_RATE_PRINCIPAL, previous,
                           knob.value, reason=f"error rate {rate:g} got worse during the bake")
        write = KnobWrite(knob.name, previous, knob.value, knob.setting, now)
        return _Plan(AutopilotCommit((entry,), knob=write),
                     Applied(knob.name, previous, previous=knob.value, rolled_back=True),
                     (knob.name, previous))

    def _rejection(self, name: str, value: object, principal: str, code: str, reason: str,
                   now: float) -> _Plan:
        shown = float(value) if is_number(value) else None  # type: ignore[arg-type]  # is_number checked it
        entry = AuditEntry(now, "rejected", name, principal, shown, reason=reason)
        return _Plan(AutopilotCommit((entry,)), Rejected(name, reason, code=code))

    def _cooldown_left(self, knob: Knob, now: float) -> float:
        changed = self._changed_at.get(knob.name)
        if knob.cooldown is None or changed is None:
            return 0.0
        return changed + knob.cooldown - now

    def _pending(self) -> list[KnobProposal]:
        with self._lock:
            return sorted((p for p in self._proposals.values() if p.status == "pending"),
                          key=lambda p: (p.created_at, p.id))

    # -- committing

    async def _execute(self, plan_at: Callable[[float], _Plan]) -> Decision | None:
        if self.store is None:
            with self._lock:
                plan = plan_at(self.clock())
                return self._settle(plan, self._chain(plan.commit.entries))
        with self._lock:
            plan = plan_at(self.clock())
        if not plan.commit.entries:
            return self._settle(plan, [])
        try:
            records = await self.store.commit_autopilot(plan.commit)
        except CommitRefusedError as refused:
            await self.arefresh()
            if isinstance(plan.decision, Applied) and plan.commit.decision is None:
                return Rejected(plan.commit.entries[0].knob, str(refused), code=refused.code)
            raise ApprovalRefusedError(refused.code, str(refused)) from None
        with self._lock:
            return self._settle(plan, records)

    def _chain(self, entries: tuple[AuditEntry, ...]) -> list[AuditRecord]:
        records: list[AuditRecord] = []
        seq, prev = len(self._records), self._records[-1].hash if self._records else ""
        for entry in entries:
            seq += 1
            records.append(chained(seq, prev, entry))
            prev = records[-1].hash
        return records

    def _settle(self, plan: _Plan, records: list[AuditRecord]) -> Decision | None:
        self._records.extend(records)
        for record in records:
            _log.info("autopilot %s", record, extra={"audit": record.to_dict()})
            if self.journal is not None:
                fields = record.to_dict()  # "event" and "seq" are the journal's own names
                fields["decision"], fields["audit_seq"] = fields.pop("event"), fields.pop("seq")
                self.journal.emit("autopilot_decision", **fields)
        if plan.proposal is not None:
            self._proposals[plan.proposal.id] = plan.proposal
        if plan.value is not None:
            name, value = plan.value
            knob = self._knobs[name]
            if plan.bake is not None:
                self._watches[name].bake = plan.bake[1]
            self._changed_at[name] = records[-1].entry.at if records else self.clock()
            self._set(knob, value)
        if plan.error is not None:
            raise plan.error
        return plan.decision

    def _set(self, knob: Knob, value: float) -> None:
        self._knobs[knob.name] = replace(knob, value=value)
        if knob.binding is not None:
            knob.binding.apply(value)

    def _sync(self, coroutine: Coroutine[Any, Any, T], method: str) -> T:
        if self.store is not None:
            return run_sync(coroutine, method=method)
        try:
            coroutine.send(None)
        except StopIteration as done:
            value: T = done.value
            return value
        coroutine.close()
        raise AssertionError(f"{method}() awaited something without a store")  # pragma: no cover


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
