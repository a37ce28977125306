"""The ``budget { … }`` and ``budget thread { … }`` blocks of an agent.

>>> budget { tokens = 50000, usd = 0.50, tool_calls = 40, model_calls = 10, time = 30s }
>>> budget thread { usd = 5.00 }

Each binding is one limit of :class:`~bloge.agent.budget.Budget`, a constant (``time``, a
run's only); every problem is reported at its own position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bloge.agent.budget import MEASURES, NO_SHARED_TIME, Budget, limit_problem
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s

#: The scopes a budget block may name, and the ``AgentDef`` field each fills.
SCOPES = {None: "budget", "thread": "thread_budget"}

Report = Callable[[str, s.Span], None]
Constant = Callable[[str, s.Expr], Any]


def budget_field(block: s.Block, report: Report) -> str | None:
    """The ``AgentDef`` field ``block`` declares, or ``None`` (reported) for an unknown scope."""
    if block.ref is not None:
        report("a budget block takes no ': <Operator>' reference", block.ref_span or block.span)
        return None
    if block.name not in SCOPES:
        hint = did_you_mean_hint(str(block.name), ("thread",))
        report(f"unknown budget scope {block.name!r}{hint}; write budget {{ … }} for a run's "
               "budget or budget thread { … } for its thread's", block.name_span or block.span)
        return None
    return SCOPES[block.name]


def compile_budget(block: s.Block, report: Report, constant: Constant,
                   invalid: object) -> Budget | None:
    """The budget ``block`` declares; ``None`` when it has problems (each reported)."""
    limits: dict[str, Any] = {}
    seen: dict[str, s.Span] = {}
    problems = False
    for statement in block.body:
        if not isinstance(statement, s.Binding):
            report("a budget block holds only <limit> = <value> bindings", statement.span)
            problems = True
            continue
        key = statement.key
        if key not in MEASURES:
            hint = did_you_mean_hint(key, MEASURES, otherwise=f" (limits: {', '.join(MEASURES)})")
            report(f"unknown budget limit {key!r}{hint}", statement.key_span)
            problems = True
            continue
        if key in seen:
            first = seen[key]
            report(f"duplicate budget limit {key!r} (first at line {first.line}, column "
                   f"{first.column})", statement.key_span)
            problems = True
            continue
        seen[key] = statement.key_span
        if key == "time" and block.name is not None:
            report(NO_SHARED_TIME, statement.key_span)
            problems = True
            continue
        value = constant(key, statement.value)
        if value is invalid:
            problems = True
            continue
        problem = limit_problem(key, value)
        if problem:
            report(problem, statement.value.span)
            problems = True
            continue
        limits[key] = value
    return None if problems else Budget(**limits)
