"""What a server lists: its usable tools, and those skipped with the reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool as its server lists it: ``input_schema`` is the JSON schema of its arguments."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SkippedTool:
    """A listed tool that cannot be offered to a model, and why."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class Listing:
    tools: tuple[McpTool, ...]
    skipped: tuple[SkippedTool, ...] = ()


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` cannot be a tool's input schema, or ``None`` when it can."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return 'its input schema is not a JSON-schema object (type "object" at the root)'
    validator = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        validator.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "the root"
        return f"its input schema is invalid at {where}: {exc.message}"
    return None


def listing_of(tools: list[Any]) -> Listing:
    """The SDK's listed tools, sorted into usable and skipped (an invalid input schema)."""
    usable: list[McpTool] = []
    skipped: list[SkippedTool] = []
    for tool in tools:
        schema = tool.input_schema
        problem = schema_problem(schema)
        if problem is not None:
            skipped.append(SkippedTool(tool.name, problem))
            continue
        usable.append(McpTool(tool.name, tool.description or "", dict(schema)))
    return Listing(tuple(usable), tuple(skipped))
