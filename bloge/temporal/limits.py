"""The run budget limits a workflow keeps: all but ``time``. A workflow must decide alike
each time it is replayed, so never by the wall clock; its execution timeout limits its time.

The workers' engines drop the rest (:meth:`~bloge.temporal.catalogue.ServedAgent.engine`),
as does a resume that takes an operator's budget
(:meth:`~bloge.temporal.runstore.TemporalRunStore.resume_recorded_run`); ``bloge run``
refuses ``--budget time=…`` on Temporal rather than drop it unsaid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bloge.agent import Budget

#: The run budget measures a workflow does not keep.
_UNKEPT = frozenset({"time"})


def kept_limits(budget: Budget | None) -> dict[str, float]:
    """The limits of ``budget`` a workflow keeps (all but ``time``, see the module docs), by
    measure; ``{}`` for no budget."""
    if budget is None:
        return {}
    return {name: limit for name, limit in budget.limits().items() if name not in _UNKEPT}
