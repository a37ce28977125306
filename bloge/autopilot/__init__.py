"""``bloge.autopilot``: agents propose tuning changes, tiered guardrails decide.

```python
from bloge.autopilot import Autopilot, Knob, KnobTier

autopilot = Autopilot()
autopilot.register_knob(Knob("concurrency", KnobTier.WHITELIST, 1, 16, 4, max_step=4))
autopilot.register_knob(Knob("turns", KnobTier.DANGEROUS, 1, 50, 10))
autopilot.propose("concurrency", 12)     # Applied('concurrency', 8.0, clamped_from=12.0)
autopilot.propose("turns", 20)           # Proposed(...): waits for another principal
autopilot.propose("nope", 1)             # Rejected('nope', "unknown knob 'nope'")
autopilot.audit_log()                    # every decision, hash-chained
```

Whitelisted knobs are applied (clamped to their bounds and step, after their cooldown),
dangerous ones are only ever proposed and applied when someone other than the proposer
approves, unknown ones are rejected. A knob's binding (:mod:`bloge.autopilot.bindings`)
makes its value a live setting. With a store (:func:`bloge.store.open_store`) the audit chain
and the proposals persist in its :class:`AuditLedger`, shared by every process using the
store.
"""

from bloge.autopilot.audit import AuditRecord, AuditVerification, KnobProposal
from bloge.autopilot.autopilot import Autopilot
from bloge.autopilot.decisions import (
    Applied,
    ApprovalRefusedError,
    AutopilotError,
    Decision,
    ProposalNotFoundError,
    Proposed,
    Rejected,
)
from bloge.autopilot.knobs import Binding, Knob, KnobTier, Mode
from bloge.autopilot.ledger import AuditLedger
from bloge.autopilot.policy import ERROR_RATE_PRINCIPAL

__all__ = [
    "ERROR_RATE_PRINCIPAL",
    "Applied",
    "ApprovalRefusedError",
    "AuditLedger",
    "AuditRecord",
    "AuditVerification",
    "Autopilot",
    "AutopilotError",
    "Binding",
    "Decision",
    "Knob",
    "KnobProposal",
    "KnobTier",
    "Mode",
    "ProposalNotFoundError",
    "Proposed",
    "Rejected",
]
