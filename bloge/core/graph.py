"""A minimal graph model: a chain of operator nodes, enough to run an agent tool's subgraph.

Each node either evaluates its ``inputs`` bindings against the run's scope or, without
bindings, receives the previous node's output (the first node receives the graph input).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry


class Evaluable(Protocol):
    """Anything that computes a value from a scope — a compiled DSL expression, typically."""

    def evaluate(self, scope: Mapping[str, Any]) -> Any: ...


@dataclass(frozen=True, slots=True)
class Node:
    """One operator invocation inside a :class:`Graph`."""

    id: str
    operator_ref: str
    inputs: Mapping[str, Evaluable] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Graph:
    """Nodes run in order; ``run`` returns every node's output by node id."""

    name: str
    nodes: tuple[Node, ...]

    def __post_init__(self) -> None:
        if not self.nodes:
            raise BlogeUsageError(f"graph {self.name!r} has no nodes")
        ids = [node.id for node in self.nodes]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise BlogeUsageError(f"graph {self.name!r} repeats node ids {duplicates}")

    async def run(
        self,
        registry: OperatorRegistry,
        input: Any,
        ctx: OperatorContext,
        *,
        scope: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run the nodes in order and return their outputs keyed by node id."""
        outputs: dict[str, Any] = {}
        value = input
        for node in self.nodes:
            if node.inputs is not None:
                bindings = scope if scope is not None else {"input": input, "ctx": ctx}
                value = {key: expr.evaluate(bindings) for key, expr in node.inputs.items()}
            value = await registry.bound(node.operator_ref).invoke(value, ctx)
            outputs[node.id] = value
        return outputs
