"""``AuditLedger``: the autopilot's records in a run store — a decision committed in one
transaction (audit records, knob value, proposal) and read back — and the scripts it runs
through the store's driver (the tables are the store's schema, :mod:`bloge.store.sql.schema`).

The chain's head is one row, ``bloge_audit_head``; every append starts by updating it, which
makes concurrent appends wait for each other (a row lock in PostgreSQL, the write lock in
SQLite), so two writers never both chain onto the same record.
"""

from __future__ import annotations

from typing import Any

from bloge.autopilot.audit import (
    VIA,
    AuditEntry,
    AuditRecord,
    AuditVerification,
    AutopilotCommit,
    CommitRefusedError,
    KnobProposal,
    KnobWrite,
    ProposalDecision,
    chained,
    requester,
    verify_chain,
)
from bloge.store import Store, StoreError, StoreNotFoundError
from bloge.store.sql.script import Query, Script, one


class AuditLedger:
    """The autopilot's hash-chained audit log, knob proposals and knob values, kept in
    ``store`` and shared by every process using it."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"AuditLedger({self.store!r})"

    async def commit(self, change: AutopilotCommit) -> list[AuditRecord]:
        """Write one autopilot decision in one transaction: its audit records (returned,
        chained), the knob's value, its proposal. :class:`CommitRefusedError` when the
        proposal cannot be decided or the knob changed elsewhere (nothing written)."""
        return await self.store.run_script(commit(change), write=True)

    async def records(self, *, after: int = 0, limit: int = 1_000_000) -> list[AuditRecord]:
        """The audit chain from record ``after + 1`` on, in order; a :class:`StoreError` for
        a record edited so that it cannot be read."""
        try:
            return await self.store.run_script(audit_records(after=after, limit=limit))
        except UnreadableAuditRecordError as error:
            raise StoreError(f"{error}: it was edited outside bloge (bloge autopilot audit "
                             "--verify)", store=self.store.url) from None

    async def verify(self) -> AuditVerification:
        """Check the whole audit chain: edited, missing and deleted records."""
        return await self.store.run_script(_verification())

    async def proposals(self, *, status: str | None = None,
                        limit: int = 1000) -> list[KnobProposal]:
        """Knob proposals, oldest first, all or those in ``status``."""
        return await self.store.run_script(proposals(status=status, limit=limit))

    async def proposal(self, proposal_id: str) -> KnobProposal:
        """The proposal; :class:`StoreNotFoundError` when there is none."""
        found = await self.store.run_script(proposal(proposal_id))
        if found is None:
            raise StoreNotFoundError(f"no knob proposal {proposal_id!r}", store=self.store.url)
        return found

    async def knob_values(self) -> dict[str, tuple[float, str | None, float]]:
        """Knob name → (value, the setting it is bound to, when it changed), as decided."""
        return await self.store.run_script(knob_values())


def _verification() -> Script[AuditVerification]:
    head = yield from audit_head()
    try:
        records = yield from audit_records(after=0, limit=head[0] + 1_000_000)
    except UnreadableAuditRecordError as error:
        problem = f"record #{error.seq} was edited (a number of it is no longer one)"
        return AuditVerification(0, (problem,))
    return verify_chain(records, head)


_AUDIT_COLUMNS = ("seq, at, event, knob, principal, value, previous, clamped_from, "
                  "proposal_id, reason, prev_hash, hash")
_PROPOSAL_COLUMNS = ("id, knob, value, previous, proposer, reason, created_at, expires_at, "
                     "clamped_from, status, decided_by, decided_at")


def commit(change: AutopilotCommit) -> Script[list[AuditRecord]]:
    """Write ``change`` (see :class:`AutopilotCommit`); :class:`CommitRefusedError`, and
    nothing written, when its proposal cannot be decided or its knob changed meanwhile."""
    if change.decision is not None:
        yield from _decide(change.decision)
    if change.knob is not None:
        yield from _write_knob(change.knob)
    if change.proposal is not None:
        p = change.proposal
        yield Query(f"INSERT INTO bloge_knob_proposals ({_PROPOSAL_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (p.id, p.knob, p.value, p.previous, p.proposer, p.reason, p.created_at,
                     p.expires_at, p.clamped_from, p.status, p.decided_by, p.decided_at))
    return (yield from _append(change.entries))


def _decide(decision: ProposalDecision) -> Script[None]:
    # Four eyes: neither the approver nor an agent on the approver's behalf proposed it.
    approver = requester(decision.principal)
    guard = {"approved": " AND expires_at >= ? AND proposer <> ? AND proposer NOT LIKE ? "
                         "ESCAPE '\\'",
             "expired": " AND expires_at < ?", "rejected": ""}[decision.status]
    params: tuple[Any, ...] = {"approved": (decision.at, approver, _like(approver) + VIA + "%"),
                               "expired": (decision.at,), "rejected": ()}[decision.status]
    done = yield Query("UPDATE bloge_knob_proposals SET status = ?, decided_by = ?, "
                       "decided_at = ? WHERE id = ? AND status = 'pending'" + guard,
                       (decision.status, decision.principal, decision.at, decision.id,
                        *params))
    if done.rowcount == 1:
        return
    row = one((yield Query("SELECT status, expires_at, proposer FROM bloge_knob_proposals "
                           "WHERE id = ?", (decision.id,))))
    if row is None:
        raise CommitRefusedError("not_found", f"there is no proposal {decision.id!r}")
    status, expires_at, proposer = row
    if status != "pending":
        raise CommitRefusedError("decided", f"proposal {decision.id!r} is already {status}")
    if decision.status == "approved" and expires_at < decision.at:
        raise CommitRefusedError("expired", f"proposal {decision.id!r} has expired")
    if decision.status == "approved" and requester(proposer) == approver:
        raise CommitRefusedError("self_approval", f"{proposer!r} proposed {decision.id!r} and "
                                 "cannot approve it: another principal must")
    raise CommitRefusedError("decided", f"proposal {decision.id!r} has not expired yet")


def _like(text: str) -> str:
    """``text`` as a LIKE pattern matching itself alone."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _write_knob(write: KnobWrite) -> Script[None]:
    row = one((yield Query("SELECT value FROM bloge_knob_values WHERE name = ?",
                           (write.name,))))
    if row is not None and write.expected is not None and row[0] != write.expected:
        raise CommitRefusedError("conflict", f"knob {write.name!r} was changed elsewhere (it "
                                 f"is {row[0]:g} now, not {write.expected:g}); propose again")
    yield Query("INSERT INTO bloge_knob_values (name, value, setting, changed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value, "
                "setting = excluded.setting, changed_at = excluded.changed_at",
                (write.name, write.value, write.setting, write.at))


def _append(entries: tuple[AuditEntry, ...]) -> Script[list[AuditRecord]]:
    if not entries:
        return []
    yield Query("UPDATE bloge_audit_head SET seq = seq + ? WHERE id = 1", (len(entries),))
    head = one((yield Query("SELECT seq, hash FROM bloge_audit_head WHERE id = 1")))
    assert head is not None  # inserted by the migration that made the table
    seq, prev = int(head[0]) - len(entries), str(head[1])
    records: list[AuditRecord] = []
    for entry in entries:
        seq += 1
        record = chained(seq, prev, entry)
        records.append(record)
        prev = record.hash
    yield Query(f"INSERT INTO bloge_audit ({_AUDIT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.seq, r.entry.at, r.entry.event, r.entry.knob, r.entry.principal,
                  r.entry.value, r.entry.previous, r.entry.clamped_from, r.entry.proposal_id,
                  r.entry.reason, r.prev_hash, r.hash) for r in records], many=True)
    yield Query("UPDATE bloge_audit_head SET hash = ? WHERE id = 1", (prev,))
    return records


def audit_records(*, after: int, limit: int) -> Script[list[AuditRecord]]:
    result = yield Query(f"SELECT {_AUDIT_COLUMNS} FROM bloge_audit WHERE seq > ? "
                         "ORDER BY seq LIMIT ?", (after, limit))
    return [_record_of(row) for row in result.rows]


def audit_head() -> Script[tuple[int, str]]:
    row = one((yield Query("SELECT seq, hash FROM bloge_audit_head WHERE id = 1")))
    return (0, "") if row is None else (int(row[0]), str(row[1]))


def proposals(*, status: str | None, limit: int) -> Script[list[KnobProposal]]:
    where, params = ("WHERE status = ? ", (status,)) if status is not None else ("", ())
    result = yield Query(f"SELECT {_PROPOSAL_COLUMNS} FROM bloge_knob_proposals {where}"
                         "ORDER BY created_at, id LIMIT ?", (*params, limit))
    return [_proposal_of(row) for row in result.rows]


def proposal(proposal_id: str) -> Script[KnobProposal | None]:
    row = one((yield Query(f"SELECT {_PROPOSAL_COLUMNS} FROM bloge_knob_proposals "
                           "WHERE id = ?", (proposal_id,))))
    return None if row is None else _proposal_of(row)


def knob_values() -> Script[dict[str, tuple[float, str | None, float]]]:
    """Knob name → (value, the setting it is bound to, when it last changed)."""
    result = yield Query("SELECT name, value, setting, changed_at FROM bloge_knob_values")
    return {str(name): (float(value), setting, float(changed))
            for name, value, setting, changed in result.rows}


class UnreadableAuditRecordError(Exception):
    """An audit record's numbers are not numbers (SQLite keeps any text put there by hand):
    the record was edited outside bloge."""

    def __init__(self, seq: object) -> None:
        super().__init__(f"audit record #{seq} cannot be read: a number of it is not one")
        self.seq = seq


def _record_of(row: tuple[Any, ...]) -> AuditRecord:
    seq, at, event, knob, principal, value, previous, clamped, proposal_id, reason, prev, h = row
    try:
        entry = AuditEntry(float(at), str(event), str(knob), str(principal), _float(value),
                           _float(previous), _float(clamped), proposal_id, str(reason))
    except (TypeError, ValueError):
        raise UnreadableAuditRecordError(seq) from None
    return AuditRecord(int(seq), entry, str(prev), str(h))


def _proposal_of(row: tuple[Any, ...]) -> KnobProposal:
    (id_, knob, value, previous, proposer, reason, created, expires, clamped, status,
     decided_by, decided_at) = row
    return KnobProposal(str(id_), str(knob), float(value), float(previous), str(proposer),
                        str(reason), float(created), float(expires), _float(clamped),
                        str(status), decided_by, _float(decided_at))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
