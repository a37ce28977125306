"""``OperatorContext``: the values an operator can see, layered from root to child."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bloge.core.fields import MISSING, read_path
from bloge.core.ids import new_id


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a run is for: the caller a server authenticated (``key:`` and the start of its
    API key's SHA-256, never the key). A recorded run and a new thread belong to ``name``;
    only an ``admin`` may run on a thread that belongs to another principal (or to none).
    A tool that acts on someone's behalf reads it from ``ctx.principal``."""

    name: str
    admin: bool = False


class OperatorContext(Mapping[str, Any]):
    """Read-only values visible to an operator, with parent fallback and dotted lookups.

    ``ctx["user"]`` reads one key (own values first, then the parents');
    ``ctx.get("user.locale")`` walks a dotted path through data only — mapping keys, list
    items (``"items.0"``), dataclass and pydantic model fields — never through other
    attributes, methods or dunders (see :mod:`bloge.core.fields`), because the path may come
    from a DSL file or a model. ``execution_id``, ``graph_name`` and ``node_id`` say where in a
    run the operator executes. The ``repr`` shows the keys, never the values (they may hold
    secrets).

    ``idempotency_key`` is set for a tool call of a recorded run (``run:turn:call_id``, see
    :mod:`bloge.store`): the same for every attempt of that call, also when a resumed run runs
    it again, so that an operator with side effects can tell a repeat from a new request.

    ``run_id`` is the recorded run the operator runs in (set with ``idempotency_key``): an
    agent run started with this context — a sub-agent's — is recorded as that run's child.

    ``principal`` is who the run is for (a :class:`Principal`, set by the server that took
    the request; ``None`` when nobody was authenticated). It is no value of the mapping: a
    DSL binding or a model cannot read or set it.
    """

    __slots__ = ("_parent", "_values", "execution_id", "graph_name", "idempotency_key",
                 "node_id", "principal", "run_id")

    execution_id: str
    graph_name: str | None
    node_id: str | None
    idempotency_key: str | None
    principal: Principal | None
    run_id: str | None

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        parent: OperatorContext | None = None,
        execution_id: str | None = None,
        graph_name: str | None = None,
        node_id: str | None = None,
        idempotency_key: str | None = None,
        principal: Principal | None = None,
        run_id: str | None = None,
    ) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._parent = parent
        self.execution_id = execution_id or (
            parent.execution_id if parent is not None else new_id()
        )
        self.graph_name = graph_name if graph_name is not None else (
            parent.graph_name if parent is not None else None
        )
        self.node_id = node_id if node_id is not None else (
            parent.node_id if parent is not None else None
        )
        self.idempotency_key = idempotency_key if idempotency_key is not None else (
            parent.idempotency_key if parent is not None else None
        )
        self.principal = principal if principal is not None else (
            parent.principal if parent is not None else None
        )
        self.run_id = run_id if run_id is not None else (
            parent.run_id if parent is not None else None
        )

    @classmethod
    def root(
        cls,
        values: Mapping[str, Any] | None = None,
        *,
        execution_id: str | None = None,
        graph_name: str | None = None,
        principal: Principal | None = None,
    ) -> OperatorContext:
        """A context with no parent: the start of one execution (for ``principal``)."""
        return cls(values, execution_id=execution_id, graph_name=graph_name,
                   principal=principal)

    def child(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        graph_name: str | None = None,
        node_id: str | None = None,
        idempotency_key: str | None = None,
        run_id: str | None = None,
    ) -> OperatorContext:
        """A context that sees ``values`` first and this context's values behind them."""
        return OperatorContext(values, parent=self, graph_name=graph_name, node_id=node_id,
                               idempotency_key=idempotency_key, run_id=run_id)

    def __getitem__(self, key: str) -> Any:
        context: OperatorContext | None = self
        while context is not None:
            value = context._values.get(key, MISSING)
            if value is not MISSING:
                return value
            context = context._parent
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key``; a dotted key such as ``"user.locale"`` walks nested data."""
        try:
            return self[key]
        except KeyError:
            pass
        if not isinstance(key, str) or "." not in key:
            return default
        head, *rest = key.split(".")
        try:
            value = self[head]
        except KeyError:
            return default
        value = read_path(value, rest)
        return default if value is MISSING else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._flattened())

    def __len__(self) -> int:
        return len(self._flattened())

    def __contains__(self, key: object) -> bool:
        context: OperatorContext | None = self
        while context is not None:
            if key in context._values:
                return True
            context = context._parent
        return False

    def _flattened(self) -> dict[str, Any]:
        merged = dict(self._parent._flattened()) if self._parent is not None else {}
        merged.update(self._values)
        return merged

    def __repr__(self) -> str:
        keys = list(self._flattened())
        return f"OperatorContext(keys={keys!r}, execution_id={self.execution_id!r})"
