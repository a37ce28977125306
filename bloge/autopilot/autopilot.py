"""``Autopilot``: agents propose knob changes, tiered guardrails decide, every decision is
audited before it takes effect."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bloge.autopilot.audit import (
    AuditEntry,
    AuditRecord,
    CommitRefusedError,
    KnobProposal,
    chained,
)
from bloge.autopilot.decisions import (
    Applied,
    ApprovalRefusedError,
    Decision,
    ProposalNotFoundError,
    Rejected,
)
from bloge.autopilot.knobs import Knob, is_number
from bloge.autopilot.ledger import AuditLedger
from bloge.autopilot.policy import Plan, Policy
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.core.sync import run_sync
from bloge.store import StoreNotFoundError

if TYPE_CHECKING:
    from bloge.store import Store

T = TypeVar("T")
_log = logging.getLogger("bloge.autopilot")


class Journal(Protocol):
    """Where decisions are also told (an :class:`~bloge.journal.EventJournal`)."""

    def emit(self, event: str, /, **fields: Any) -> None: ...


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
                 new_id: Callable[[], str] = lambda: new_id()[:12],
                 journal: Journal | None = None) -> None:
        if not (is_number(proposal_ttl) and proposal_ttl > 0):
            raise BlogeUsageError(f"proposal_ttl must be a number > 0, got {proposal_ttl!r}")
        if not (is_number(hold) and hold >= 0):
            raise BlogeUsageError(f"hold must be a number >= 0, got {hold!r}")
        if not (is_number(recovery_ratio) and 0 <= recovery_ratio <= 1):
            raise BlogeUsageError(f"recovery_ratio must be in [0, 1], got {recovery_ratio!r}")
        self._policy = Policy(auto_execute_whitelist, proposal_ttl, hold, recovery_ratio,
                              principal, new_id)
        #: Where decisions are kept and shared, with a store; ``None`` without one.
        self.ledger = None if store is None else AuditLedger(store)
        self.clock = clock
        self.journal = journal
        self._records: list[AuditRecord] = []
        self._lock = self._policy.lock

    @property
    def auto_execute_whitelist(self) -> bool:
        return self._policy.auto_execute_whitelist

    @property
    def principal(self) -> str:
        """Who the autopilot's own decisions (expiries) are recorded as."""
        return self._policy.principal

    def proposal(self, proposal_id: str) -> KnobProposal:
        """A proposal this autopilot knows, pending or decided."""
        try:
            return self._policy.proposals[proposal_id]
        except KeyError:
            raise ProposalNotFoundError(f"no proposal {proposal_id!r}") from None

    # -- knobs

    def register_knob(self, knob: Knob) -> None:
        """Add ``knob``; its binding takes the knob's value now. A name is registered once."""
        if not isinstance(knob, Knob):
            raise BlogeUsageError(f"register_knob() takes a Knob, got {knob!r}")
        with self._lock:
            if knob.name in self._policy.knobs_by_name:
                raise BlogeUsageError(f"a knob named {knob.name!r} is already registered")
            self._policy.knobs_by_name[knob.name] = knob
            self._policy.declared[knob.name] = knob.value
        if knob.binding is not None:
            knob.binding.apply(knob.value)

    def knobs(self) -> list[Knob]:
        """The knobs, by name, with their current values."""
        with self._lock:
            knobs = self._policy.knobs_by_name
            return [knobs[name] for name in sorted(knobs)]

    def knob(self, name: str) -> Knob:
        knobs = self._policy.knobs_by_name
        try:
            return knobs[name]
        except KeyError:
            raise BlogeUsageError(f"no knob {name!r} (knobs: "
                                  f"{', '.join(sorted(knobs)) or 'none'})") from None

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
            lambda now: self._policy.plan_proposal(name, value, principal or self.principal,
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
            lambda now: self._policy.plan_verdict(proposal_id, "approved", principal, "", now))
        assert isinstance(decision, Applied)
        return decision

    def reject(self, proposal_id: str, *, principal: str, reason: str = "") -> Rejected:
        """Turn a pending proposal down."""
        return self._sync(self.areject(proposal_id, principal=principal, reason=reason),
                          "reject")

    async def areject(self, proposal_id: str, *, principal: str, reason: str = "") -> Rejected:
        await self._load(proposal_id)
        decision = await self._execute(
            lambda now: self._policy.plan_verdict(proposal_id, "rejected", principal, reason, now))
        assert isinstance(decision, Rejected)
        return decision

    def proposals(self) -> list[KnobProposal]:
        """The proposals waiting for approval, oldest first (expired ones are expired)."""
        return self._sync(self.aproposals(), "proposals")

    async def aproposals(self) -> list[KnobProposal]:
        await self.arefresh()
        for proposal in self._policy.pending():
            if proposal.expires_at < self.clock():
                await self._execute(self._policy.expiry_of(proposal))
        return self._policy.pending()

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
            lambda now: self._policy.plan_observation(knob_name, error_rate, threshold, now))

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
        if self.ledger is None:
            return
        values = await self.ledger.knob_values()
        pending = await self.ledger.proposals(status="pending")
        with self._lock:
            self._policy.proposals = {p.id: p for p in pending}
            for name, (value, _setting, changed) in values.items():
                knob = self._policy.knobs_by_name.get(name)
                if knob is None or not knob.min <= value <= knob.max:
                    continue
                self._policy.changed_at[name] = changed
                if value != knob.value:
                    self._set(knob, value)

    async def _load(self, proposal_id: str) -> None:
        """Refresh, and know ``proposal_id`` even when another process decided it."""
        if self.ledger is None:
            return
        await self.arefresh()
        if proposal_id not in self._policy.proposals:
            with contextlib.suppress(StoreNotFoundError):
                found = await self.ledger.proposal(proposal_id)
                with self._lock:
                    self._policy.proposals[proposal_id] = found

    # -- committing

    async def _execute(self, plan_at: Callable[[float], Plan]) -> Decision | None:
        if self.ledger is None:
            with self._lock:
                plan = plan_at(self.clock())
                return self._settle(plan, self._chain(plan.commit.entries))
        with self._lock:
            plan = plan_at(self.clock())
        if not plan.commit.entries:
            return self._settle(plan, [])
        try:
            records = await self.ledger.commit(plan.commit)
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

    def _settle(self, plan: Plan, records: list[AuditRecord]) -> Decision | None:
        self._records.extend(records)
        for record in records:
            _log.info("autopilot %s", record, extra={"audit": record.to_dict()})
            if self.journal is not None:
                fields = record.to_dict()  # "event" and "seq" are the journal's own names
                fields["decision"], fields["audit_seq"] = fields.pop("event"), fields.pop("seq")
                self.journal.emit("autopilot_decision", **fields)
        if plan.proposal is not None:
            self._policy.proposals[plan.proposal.id] = plan.proposal
        if plan.value is not None:
            name, value = plan.value
            knob = self._policy.knobs_by_name[name]
            if plan.bake is not None:
                self._policy.watches[name].bake = plan.bake[1]
            self._policy.changed_at[name] = records[-1].entry.at if records else self.clock()
            self._set(knob, value)
        if plan.error is not None:
            raise plan.error
        return plan.decision

    def _set(self, knob: Knob, value: float) -> None:
        self._policy.knobs_by_name[knob.name] = replace(knob, value=value)
        if knob.binding is not None:
            knob.binding.apply(value)

    def _sync(self, coroutine: Coroutine[Any, Any, T], method: str) -> T:
        if self.ledger is not None:
            return run_sync(coroutine, method=method)
        try:
            coroutine.send(None)
        except StopIteration as done:
            value: T = done.value
            return value
        coroutine.close()
        raise AssertionError(f"{method}() awaited something without a store")  # pragma: no cover
