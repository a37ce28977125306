"""``OperatorRegistry``: operators by name, as the DSL and the agent loop refer to them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Self

from bloge.core.errors import BlogeUsageError, UnknownOperatorError
from bloge.core.operator import BoundOperator, bind
from bloge.core.workers import WorkerPool


class OperatorRegistry:
    """Named operators. Lookups of unknown names fail with a "did you mean" suggestion.

    >>> registry = OperatorRegistry.builder().register("echo", lambda input: input).build()
    >>> "echo" in registry
    True

    Sync operators run on ``workers`` (default: the process-wide
    :data:`~bloge.core.workers.DEFAULT_WORKERS`); pass ``WorkerPool(n)`` to size it.
    """

    __slots__ = ("_bound", "_operators", "_workers")

    def __init__(
        self, operators: Mapping[str, Any] | None = None, *, workers: WorkerPool | None = None
    ) -> None:
        self._operators: dict[str, Any] = {}
        self._bound: dict[str, BoundOperator] = {}
        self._workers = workers
        for name, operator in (operators or {}).items():
            self.register(name, operator)

    @staticmethod
    def builder() -> OperatorRegistryBuilder:
        """A fluent builder: ``OperatorRegistry.builder().register(name, op).build()``."""
        return OperatorRegistryBuilder()

    def register(self, name: str, operator: Any, *, replace: bool = False) -> Self:
        """Add ``operator`` under ``name``; re-registering a name needs ``replace=True``."""
        if not isinstance(name, str) or not name.strip():
            raise BlogeUsageError(f"operator names must be non-empty strings, got {name!r}")
        if name in self._operators and not replace:
            raise BlogeUsageError(
                f"an operator is already registered under {name!r}; "
                "pass replace=True to swap it"
            )
        self._bound[name] = bind(name, operator, workers=self._workers)
        self._operators[name] = operator
        return self

    def get(self, name: str, *, purpose: str = "") -> Any:
        """The operator registered under ``name``; ``UnknownOperatorError`` otherwise."""
        try:
            return self._operators[name]
        except KeyError:
            raise UnknownOperatorError(name, self._operators, purpose=purpose) from None

    def bound(self, name: str, *, purpose: str = "") -> BoundOperator:
        """The operator under ``name``, inspected once and ready to ``invoke``."""
        try:
            return self._bound[name]
        except KeyError:
            raise UnknownOperatorError(name, self._operators, purpose=purpose) from None

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._operators)

    def __contains__(self, name: object) -> bool:
        return name in self._operators

    def __iter__(self) -> Iterator[str]:
        return iter(self._operators)

    def __len__(self) -> int:
        return len(self._operators)

    def __repr__(self) -> str:
        return f"OperatorRegistry({list(self._operators)!r})"


class OperatorRegistryBuilder:
    """Collects registrations, then builds an :class:`OperatorRegistry`."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[tuple[str, Any]] = []

    def register(self, name: str, operator: Any) -> Self:
        self._entries.append((name, operator))
        return self

    def build(self) -> OperatorRegistry:
        registry = OperatorRegistry()
        for name, operator in self._entries:
            registry.register(name, operator)
        return registry
