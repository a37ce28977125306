"""The audit of tool-call decisions: each approval or denial of a paused run's call is an
entry of the autopilot's hash-chained audit (``bloge approvals audit --verify`` checks it),
written in the decision's own transaction (the ``audit=`` of :func:`bloge.store.decide_call`).

An entry is ``approved`` or ``rejected`` of the knob ``tool:<name>``; its ``proposal_id`` is
``<run id>/<call id>``, its reason the call's hash and the decider's reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bloge.autopilot.audit import AuditEntry, AutopilotCommit
from bloge.autopilot.ledger import commit
from bloge.store import PendingApproval
from bloge.store.sql.script import Script

#: The knob of a tool's decisions in the audit: ``tool:<name>``.
KNOB_PREFIX = "tool:"


def call_entry(call: PendingApproval, *, approved: bool, principal: str | None,
               reason: str | None) -> AuditEntry:
    """The audit entry of one decision on ``call``."""
    why = f"call hash {call.hash}" + (f": {reason}" if reason else "")
    return AuditEntry(at=time.time(), event="approved" if approved else "rejected",
                      knob=KNOB_PREFIX + call.tool, principal=principal or "anonymous",
                      proposal_id=f"{call.run_id}/{call.call_id}", reason=why)


def audited(*, approved: bool, principal: str | None,
            reason: str | None) -> Callable[[PendingApproval], Script[object]]:
    """The ``audit=`` of :func:`bloge.store.decide_call` that appends the decision's entry."""
    def script(call: PendingApproval) -> Script[object]:
        entry = call_entry(call, approved=approved, principal=principal, reason=reason)
        return (yield from commit(AutopilotCommit(entries=(entry,))))
    return script
