"""The DSL's output fields as a JSON schema.

``output { title: string, priority: "low" | "normal" | "high", tags: list<string>? }``:
types are ``string``, ``int``, ``float``, ``bool``, ``list<T>``, literal values (``"low"``,
``3``, ``true``), unions of those (``a | b``) and nested objects (``{ … }``); a trailing ``?``
makes a field optional (strict-ready: the field is listed, and may be ``null``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s

#: The named types and their JSON-schema forms.
SCALARS: dict[str, dict[str, str]] = {
    "string": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
    "bool": {"type": "boolean"},
}

Report = Callable[[str, s.Span], None]


def object_schema(fields: Sequence[s.Statement], report: Report,
                  span: s.Span) -> dict[str, Any]:
    """The object schema of ``fields`` (the body of an ``output`` block or of ``{ … }``);
    each problem goes to ``report`` with where it is."""
    properties: dict[str, Any] = {}
    for statement in fields:
        if not isinstance(statement, s.Field):
            report("an output block holds only fields: name: type (string, int, float, "
                   'bool, list<T>, "literal", a | b, { … }; ? makes one optional)',
                   statement.span)
            continue
        if len(statement.names) != 1:
            report(f"a field has one name, got {' '.join(statement.names)!r}",
                   statement.name_span)
            continue
        name = statement.names[0]
        if name in properties:
            report(f"field {name!r} is declared twice", statement.name_span)
            continue
        made = type_schema(statement.type, report)
        properties[name] = {"anyOf": [made, {"type": "null"}]} if statement.type.optional \
            else made
    if not properties:
        report("an output block needs at least one field, e.g. output { answer: string }", span)
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def type_schema(node: s.TypeUnion, report: Report, *, nested: bool = False) -> dict[str, Any]:
    """The schema of one type; ``nested`` (a list's item type) may not be optional."""
    if nested and node.optional:
        report("only a field can be optional; write list<T>? for an optional list", node.span)
    options = [_option(option, report) for option in node.options]
    if len(options) == 1:
        return options[0]
    literals = [o["const"] for o in options if set(o) == {"const"}]
    if len(literals) == len(options):
        return {"enum": literals}
    return {"anyOf": options}


def _option(node: s.TypeName | s.TypeLiteral | s.TypeObject, report: Report) -> dict[str, Any]:
    match node:
        case s.TypeLiteral(value=value):
            return {"const": value}
        case s.TypeObject(fields=fields, span=span):
            return object_schema(fields, report, span)
        case s.TypeName(name="list", args=args, span=span):
            if len(args) != 1:
                report(f"list takes one item type, list<T>; got {len(args)}", span)
                return {"type": "array"}
            return {"type": "array", "items": type_schema(args[0], report, nested=True)}
        case s.TypeName(name=name, args=args, span=span):
            if name not in SCALARS:
                hint = did_you_mean_hint(name, [*SCALARS, "list"],
                                         otherwise="; known: string, int, float, bool, list<T>")
                report(f"unknown type {name!r}{hint}", span)
                return {}
            if args:
                report(f"{name} takes no type arguments", span)
            return dict(SCALARS[name])
