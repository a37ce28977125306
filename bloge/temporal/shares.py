"""What a child workflow shares with the runs that called it, as a local sub-agent's run does
(see :mod:`bloge.agent.subagent`): their budgets, and the run tree's ceiling on its
sub-agents' tool calls.

A caller's workflow starts a child with what its budgets (and its callers') allow it — by
measure, the limit with the least left and what was used of it
(:class:`~bloge.agent.runtime.CallerAllowance`: each of the child's model calls must fit) —
and with the tree's tool-call ceiling and the calls made against it so far. The child counts
its own tool calls against that ceiling (a call past it is answered with an error instead of
running), and when it ends reports, in its result or as its failure's last detail, what it
spent by run and how many tool calls were made below its caller; the caller charges the
spend to its ledger (a budget stop then names the child) and adds the calls to its count.
Everything is workflow data, so replay decides alike; concurrent children each start from
what was left when they started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.agent.runtime import CallerAllowance, DescendantCalls, RunLedger, Spend
from bloge.temporal.wire import Json

#: The keys of a child workflow's start (and of its next histories' starts).
CALLER_BUDGET = "caller_budget"
CALLER_SPENT = "caller_spent"
DESCENDANTS = "descendants"
#: The key of a child's report (its result's, or its failure's last detail's).
REPORT = "shared"


class Shares:
    """A workflow's share of its callers' (``allowance``: ``None`` for a run no one called,
    or whose callers set no limit) and its count of the run tree's tool calls (``nested``:
    its own count against the ceiling, since it is a sub-agent's run)."""

    __slots__ = ("allowance", "base", "below", "nested")

    def __init__(self, start: Mapping[str, Any]) -> None:
        caps = start.get(CALLER_BUDGET)
        self.allowance = None if caps is None else CallerAllowance(
            {str(measure): (float(limit), float(used)) for measure, (limit, used) in caps.items()},
            _spends(start.get(CALLER_SPENT) or {}))
        tree = start.get(DESCENDANTS)
        self.nested = tree is not None
        self.below = DescendantCalls()
        self.base = 0
        if tree is not None:
            self.below.lower(tree.get("ceiling"))
            self.below.made = int(tree["made"])
            self.base = int(tree.get("base", tree["made"]))

    def carried(self) -> Json:
        """What the run's next history starts with (it continues as new)."""
        data: Json = {}
        if self.allowance is not None:
            data[CALLER_BUDGET] = _caps(self.allowance)
            data[CALLER_SPENT] = _spent(self.allowance)
        if self.nested:
            data[DESCENDANTS] = {"ceiling": self.below.ceiling, "made": self.below.made,
                                 "base": self.base}
        return data

    def report(self) -> Json:
        """What the run tells its caller when it ends (nothing, if no one called it)."""
        if self.allowance is None and not self.nested:
            return {}
        return {REPORT: {CALLER_SPENT: {} if self.allowance is None
                         else _spent(self.allowance),
                         "calls": self.below.made - self.base}}

    def details(self) -> tuple[Json, ...]:
        """The report, as its failure's last detail."""
        found = self.report()
        return (found,) if found else ()

    def for_child(self, ledger: RunLedger | CallerAllowance | None,
                  ceiling: int | None) -> Json:
        """What a child this run starts gets: what ``ledger`` (the caller's, in its tool
        round) allows it, and the tree's count under ``ceiling`` (the sub-agent tool's)."""
        self.below.lower(ceiling)
        data: Json = {DESCENDANTS: {"ceiling": self.below.ceiling, "made": self.below.made}}
        allowed = None if ledger is None or not ledger.limited else ledger.allowance()
        if allowed is not None:
            data[CALLER_BUDGET] = _caps(allowed)
        return data

    def settle(self, ledger: RunLedger | CallerAllowance | None, reported: Any) -> None:
        """Take a child's report (``reported``: its result, or its failure's details)."""
        found = reported.get(REPORT) if isinstance(reported, dict) else None
        if found is None and isinstance(reported, (list, tuple)) and reported:
            last = reported[-1]
            found = last.get(REPORT) if isinstance(last, dict) else None
        if not isinstance(found, dict):
            return
        self.below.made += int(found.get("calls", 0))
        if ledger is not None:
            for name, spent in _spends(found.get(CALLER_SPENT) or {}).items():
                ledger.charge(name, spent)


def _caps(allowance: CallerAllowance) -> Json:
    return {measure: [limit, used] for measure, (limit, used) in allowance.caps.items()}


def _spent(allowance: CallerAllowance) -> Json:
    return {name: {"input_tokens": spent.input_tokens, "output_tokens": spent.output_tokens,
                   "usd": spent.usd, "model_calls": spent.model_calls,
                   "tool_calls": spent.tool_calls}
            for name, spent in allowance.spent_below.items()}


def _spends(data: Mapping[str, Any]) -> dict[str, Spend]:
    return {str(name): Spend(int(spent.get("input_tokens", 0)),
                             int(spent.get("output_tokens", 0)), float(spent.get("usd", 0.0)),
                             int(spent.get("model_calls", 0)), int(spent.get("tool_calls", 0)))
            for name, spent in data.items()}
