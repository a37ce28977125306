"""An agent's ``output`` in the DSL: a block of fields, or ``output = RegisteredType``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.agent.output.dsl import Report, object_schema
from bloge.agent.output.schema import OutputSchema
from bloge.core.errors import BlogeUsageError
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s


def output_block(block: s.Block, agent_id: str, report: Report) -> OutputSchema | None:
    """The schema of ``output { … }``; ``None`` when it has problems (all reported)."""
    problems: list[str] = []

    def collect(message: str, span: s.Span) -> None:
        problems.append(message)
        report(message, span)

    schema = object_schema(block.body, collect, block.span)
    return None if problems else OutputSchema.from_json_schema(agent_id, schema)


def output_reference(node: s.Expr, types: Mapping[str, Any],
                     report: Report) -> OutputSchema | None:
    """The schema of ``output = Name``: the pydantic model, dataclass or TypedDict registered
    under ``Name`` (``bloge.output.types``, or ``AgentDslCompiler(output_types=…)``)."""
    if not isinstance(node, s.Var):
        report("output = <RegisteredType> names a registered type (bloge.output.types); "
               "or declare fields: output { name: string }", node.span)
        return None
    if node.name not in types:
        hint = did_you_mean_hint(node.name, types)
        known = ", ".join(sorted(types)) or "none"
        report(f"output type {node.name!r} is not registered{hint} (registered: {known}); "
               "add it to bloge.output.types", node.span)
        return None
    target = types[node.name]
    try:
        return OutputSchema.of(target, name=node.name)
    except BlogeUsageError as exc:
        report(str(exc), node.span)
        return None
