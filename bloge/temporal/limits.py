"""A workflow's limits: the run budget limits it keeps, the part of a deployment's budget
policy it keeps, and the error refusing new limits.

A workflow keeps all but ``time``: it must decide alike each time it is replayed, so never by
the wall clock; its execution timeout limits its time. The workers' engines drop the rest
(:meth:`~bloge.temporal.catalogue.ServedAgent.engine`), as does a resume that takes an
operator's budget (:meth:`~bloge.temporal.runstore.TemporalRunStore.resume_recorded_run`).
Limits asked for — ``bloge run --budget time=…``, a ``POST /runs/{id}/resume`` body's —
are refused rather than dropped unsaid (:func:`refuse_unkept`), as are a thread's, and an
agent's own thread budget (:func:`refuse_thread_budget`).

Of a :class:`~bloge.agent.BudgetPolicy` a workflow keeps the default run limits (but
``time``), the prices and the answer cap (:func:`kept_policy`): they are data its engine
decides with. Thread and key budgets are kept in the run store with reservations a workflow
does not make, so it keeps none; the deployments refuse them (see ``bloge worker``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bloge.agent import Budget, BudgetPolicy
from bloge.core.errors import BlogeUsageError

if TYPE_CHECKING:
    from bloge.agent import AgentDef

#: The run budget measures a workflow does not keep.
_UNKEPT = frozenset({"time"})


def kept_limits(budget: Budget | None) -> dict[str, float]:
    """The limits of ``budget`` a workflow keeps (all but ``time``, see the module docs), by
    measure; ``{}`` for no budget."""
    if budget is None:
        return {}
    return {name: limit for name, limit in budget.limits().items() if name not in _UNKEPT}


#: Why a workflow keeps no thread's limits, and no ``time`` limit.
_NO_THREAD = ("runs on Temporal workers (bloge.runner: temporal) keep their run's budget "
              "only, not their thread's; leave it out, or run with bloge.runner: local")
_NO_TIME = ("a run on Temporal workers (bloge.runner: temporal) keeps no time limit, for its "
            "workflow must decide alike when replayed (its execution timeout limits its "
            "time); leave it out")


def refuse_unkept(budget: Mapping[str, Any] | None) -> None:
    """Refuse the limits of ``budget`` a workflow never keeps (see the module docs): a
    thread's, then ``time``. ``budget`` holds a run's limits as a resume asks for them,
    ``thread`` a mapping of its thread's (``{"tokens": 80000, "thread": {…}}``, a ``POST
    /runs/{id}/resume`` body's, see :func:`~bloge.agent.with_budget_limits`). Raises
    :class:`LimitsRefusedError` naming the first as ``budget.thread`` or ``budget.time``."""
    limits = budget or {}
    if limits.get("thread"):
        raise LimitsRefusedError("", "", max_turns=None, budget={"thread": limits["thread"]},
                                 why=_NO_THREAD)
    if limits.get("time") is not None:
        raise LimitsRefusedError("", "", max_turns=None, budget={"time": limits["time"]},
                                 why=_NO_TIME)


def thread_budget_refusal(agent_id: str) -> str:
    """Why a run of agent ``agent_id``, which has a thread budget, is refused on Temporal."""
    return (f"agent {agent_id!r} has a thread budget (budget thread {{ … }}), which runs on "
            "Temporal workers do not keep (only a run's budget): remove it, or run with "
            "bloge.runner: local")


def refuse_thread_budget(definition: AgentDef) -> None:
    """Refuse a run of ``definition`` with a thread budget — its DSL's, or one its operator
    was retuned with — rather than let it spend past it unsaid: a workflow keeps none."""
    if definition.thread_budget is not None and definition.thread_budget.limited:
        raise BlogeUsageError(thread_budget_refusal(definition.id))


def kept_policy(policy: BudgetPolicy) -> BudgetPolicy:
    """What a workflow keeps of ``policy`` (see the module docs): its default run limits
    but ``time``, its prices and its answer cap. A policy with thread or key budgets raises
    :class:`~bloge.core.errors.BlogeUsageError`: a workflow keeps none, and would spend past
    them unsaid."""
    unkept = [name for name, budget in (("thread", policy.thread), ("per_key", policy.per_key))
              if budget is not None and budget.limited]
    if any(budget.limited for budget in policy.keys.values()):
        unkept.append("keys")
    if unkept:
        raise BlogeUsageError(f"a budget policy with {' and '.join(unkept)} budgets cannot be "
                              "kept by runs on Temporal workers, which keep their run's budget "
                              "only; leave them out")
    run = Budget.of(kept_limits(policy.run))
    return BudgetPolicy(run=run if run is not None and run.limited else None,
                        period=policy.period, prices=policy.prices,
                        answer_cap=policy.answer_cap)


class LimitsRefusedError(BlogeUsageError):
    """Limits for a run on Temporal that its workflow does not take: those no workflow
    keeps, a thread's and ``time`` (:func:`refuse_unkept`; :attr:`why` says why), or new
    ones while it is inside a round (see
    :meth:`~bloge.temporal.runstore.TemporalRunStore.go_on`). The message names them as the
    library's parameters (``budget.time: …``, ``… new limits (max_turns 9, budget
    tokens=80000) …``); :meth:`naming` words the latter with other names, as ``bloge runs
    resume`` does with its options."""

    def __init__(self, before: str, after: str, *, max_turns: int | None,
                 budget: Mapping[str, Any] | None, why: str | None = None) -> None:
        self.max_turns = max_turns
        self.budget = dict(budget or {})
        #: Why no workflow keeps the one limit of :attr:`budget`, if it is one of those
        #: (:func:`refuse_unkept`: ``{"time": 30}``, ``{"thread": {…}}``).
        self.why = why
        self._before, self._after = before, after
        super().__init__(self.naming(max_turns="max_turns", budget="budget"))

    def naming(self, *, max_turns: str, budget: str) -> str:
        """The message, the limits named ``<max_turns> 9, <budget> tokens=80000``; one no
        workflow keeps as ``<budget>.time``."""
        if self.why is not None:
            return f"{budget}.{next(iter(self.budget))}: {self.why}"
        named = [] if self.max_turns is None else [f"{max_turns} {self.max_turns}"]
        named.extend(f"{budget} {name}={value}" for name, value in self.budget.items())
        return f"{self._before}{', '.join(named)}{self._after}"
