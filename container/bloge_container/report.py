"""The conditions report: which components were registered, and why the others were not.

The container records every decision it makes while wiring — like Spring Boot's conditions
evaluation report — so ``bloge config`` can explain the application it built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ConditionKind = Literal["on-property", "on-class", "on-missing-bean", "collect-all", "always"]


@dataclass(frozen=True, slots=True)
class Condition:
    """One wiring decision: ``component`` was (or was not) ``registered`` because ``reason``."""

    component: str
    registered: bool
    kind: ConditionKind
    reason: str

    def line(self) -> str:
        verdict = "registered" if self.registered else "not registered"
        return f"{self.component}: {verdict}, {self.reason} [{self.kind}]"


@dataclass(slots=True)
class ConditionsReport:
    """Decisions in the order they were made."""

    conditions: list[Condition] = field(default_factory=list)

    def record(self, component: str, *, registered: bool, kind: ConditionKind,
               reason: str) -> None:
        """Record a decision once: a provider that decided on nothing (``None``) is asked
        again each time it is needed (dependency-injector caches no ``None``), and decides
        the same."""
        condition = Condition(component, registered, kind, reason)
        if condition not in self.conditions:
            self.conditions.append(condition)

    def lines(self) -> list[str]:
        return [condition.line() for condition in self.conditions]

    def find(self, component: str) -> Condition:
        """The last decision about ``component``; ``KeyError`` if there was none."""
        for condition in reversed(self.conditions):
            if condition.component == component:
                return condition
        raise KeyError(component)
