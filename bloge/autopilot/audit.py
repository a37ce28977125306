"""The autopilot's records in the store: a hash-chained audit log, knob proposals awaiting a
human, and the knobs' current values.

Every audit record carries the hash of the one before it (and its own number), so an edited
record no longer matches its hash, a deleted one breaks the chain, and a deleted tail no
longer matches the chain's head (a row kept beside the records): :func:`verify_chain` finds
each. Without a secret key this is evidence against edits made by hand or by a program that
does not recompute the hashes, not against someone who rewrites the whole chain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from bloge.core.errors import BlogeError

#: What an audit record says happened.
EVENTS = frozenset({"applied", "proposed", "rejected", "approved", "expired", "rolled_back",
                    "dry_run"})


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One decision about a knob, as it is appended: ``event`` is one of :data:`EVENTS`;
    ``value`` the value decided (``None`` for a rejection of a value that is not a number),
    ``previous`` the knob's value before, ``clamped_from`` what was asked when it was clamped."""

    at: float
    event: str
    knob: str
    principal: str
    value: float | None = None
    previous: float | None = None
    clamped_from: float | None = None
    proposal_id: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"at": self.at, "event": self.event, "knob": self.knob,
                "principal": self.principal, "value": self.value, "previous": self.previous,
                "clamped_from": self.clamped_from, "proposal_id": self.proposal_id,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """An :class:`AuditEntry` in the chain: its number (from 1), the hash of the record
    before (``""`` for the first) and its own."""

    seq: int
    entry: AuditEntry
    prev_hash: str
    hash: str

    def __str__(self) -> str:
        e = self.entry
        when = datetime.fromtimestamp(e.at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        change = ("" if e.value is None else f" {_number(e.value)}" if e.previous is None
                  else f" {_number(e.previous)} -> {_number(e.value)}")
        clamped = "" if e.clamped_from is None else f" (clamped from {_number(e.clamped_from)})"
        proposal = "" if e.proposal_id is None else f" [proposal {e.proposal_id}]"
        reason = f": {e.reason}" if e.reason else ""
        return (f"#{self.seq} {when} {e.event} {e.knob}{change}{clamped}{proposal} "
                f"by {e.principal}{reason}")

    def to_dict(self) -> dict[str, object]:
        return {"seq": self.seq, **self.entry.to_dict(), "prev_hash": self.prev_hash,
                "hash": self.hash}


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def record_hash(seq: int, prev_hash: str, entry: AuditEntry) -> str:
    """The SHA-256 of the record: its number, the hash before it and every field (numbers as
    floats, as the database gives them back)."""
    fields = [float(v) if isinstance(v, int) else v for v in entry.to_dict().values()]
    canonical = json.dumps([seq, prev_hash, *fields],
                           separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def chained(seq: int, prev_hash: str, entry: AuditEntry) -> AuditRecord:
    """``entry`` as record ``seq`` after the record whose hash is ``prev_hash``."""
    return AuditRecord(seq, entry, prev_hash, record_hash(seq, prev_hash, entry))


@dataclass(frozen=True, slots=True)
class AuditVerification:
    """What :func:`verify_chain` found: the records checked and every problem, in order."""

    records: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_chain(records: list[AuditRecord], head: tuple[int, str]) -> AuditVerification:
    """Check ``records`` (in order) against each other and the chain's ``head`` (the number
    and hash of the last record appended)."""
    problems: list[str] = []
    expected_seq, prev = 1, ""
    for record in records:
        if record.seq != expected_seq:
            problems.append(f"record #{expected_seq} is missing (the next one is "
                            f"#{record.seq})")
        if record.prev_hash != prev:
            problems.append(f"record #{record.seq} does not follow the record before it "
                            "(its previous hash differs)")
        if record_hash(record.seq, record.prev_hash, record.entry) != record.hash:
            problems.append(f"record #{record.seq} was edited (its hash no longer matches)")
        expected_seq, prev = record.seq + 1, record.hash
    last_seq, last_hash = head
    if last_seq != expected_seq - 1 or last_hash != prev:
        problems.append(f"the chain ends at #{expected_seq - 1}, but #{last_seq} was the last "
                        "record appended: records were deleted or rewritten")
    return AuditVerification(len(records), tuple(problems))


@dataclass(frozen=True, slots=True)
class KnobProposal:
    """A change of a dangerous knob, waiting for a human: ``status`` is ``pending``,
    ``approved``, ``rejected`` or ``expired``."""

    id: str
    knob: str
    value: float
    previous: float
    proposer: str
    reason: str
    created_at: float
    expires_at: float
    clamped_from: float | None = None
    status: str = "pending"
    decided_by: str | None = None
    decided_at: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "knob": self.knob, "value": self.value,
                "previous": self.previous, "clamped_from": self.clamped_from,
                "proposer": self.proposer, "reason": self.reason, "status": self.status,
                "created_at": self.created_at, "expires_at": self.expires_at,
                "decided_by": self.decided_by, "decided_at": self.decided_at}


@dataclass(frozen=True, slots=True)
class KnobWrite:
    """Set knob ``name`` to ``value``, provided it still has the value ``expected`` (``None``:
    the store has no value for it yet, or any value will do)."""

    name: str
    value: float
    expected: float | None
    setting: str | None
    at: float


#: Joins the principal a proposal was made for and the agent that made it:
#: ``key:ab12cd34ef56 via agent`` (see :func:`requester`).
VIA = " via "


def on_behalf_of(requester: str, agent: str) -> str:
    """Who a proposal an ``agent`` made for ``requester`` is recorded as proposed by."""
    return f"{requester}{VIA}{agent}"


def requester(principal: str) -> str:
    """The principal whose four eyes count: the requester of a proposal an agent made on
    someone's behalf (``key:ab12 via agent`` → ``key:ab12``), else ``principal`` itself. No
    one approves their own proposal by having an agent make it."""
    return principal.split(VIA, 1)[0]


@dataclass(frozen=True, slots=True)
class ProposalDecision:
    """Decide proposal ``id``: ``status`` ``approved`` (by someone other than its proposer's
    :func:`requester`, before it expires), ``rejected``, or ``expired`` (once it has)."""

    id: str
    status: str
    principal: str
    at: float


@dataclass(frozen=True, slots=True)
class AutopilotCommit:
    """What one decision writes, in one transaction: the proposal decided, the knob's new
    value, a new proposal, and the audit entries — all, or none."""

    entries: tuple[AuditEntry, ...]
    knob: KnobWrite | None = None
    proposal: KnobProposal | None = None
    decision: ProposalDecision | None = None


class CommitRefusedError(BlogeError):
    """A decision the store refused, nothing written: ``code`` is ``not_found``,
    ``decided`` (already approved, rejected or expired), ``expired``, ``self_approval`` or
    ``conflict`` (the knob changed since)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
