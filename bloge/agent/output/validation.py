"""Checks a JSON value against the JSON-schema subset output schemas are made of.

The subset: ``type`` (``string``, ``integer``, ``number``, ``boolean``, ``null``, ``array``,
``object``), ``enum``, ``const``, ``anyOf``, ``items``, ``properties``, ``required``,
``additionalProperties: false`` and local ``$ref``s (``#/$defs/…``); other keywords are not
checked. Every problem is located (``$.tags[1]``), says what was
expected and quotes what was found, for the model to mend its answer. Schemas of registered
Python types are checked by pydantic instead (see :mod:`.schema`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bloge.agent.output.problems import OutputProblem, quoted

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),), "array": (list,), "object": (dict,),
}
_NAMES = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "null": "null", "array": "a list", "object": "an object"}


def check(value: Any, schema: Mapping[str, Any], path: str = "$",
          root: Mapping[str, Any] | None = None) -> list[OutputProblem]:
    """Every problem of ``value`` against ``schema``; empty when it fits. ``root`` is the
    document local ``$ref``s (``#/$defs/Name``) point into (default: ``schema``)."""
    root = schema if root is None else root
    if "$ref" in schema:
        return check(value, _referenced(schema["$ref"], root), path, root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(not check(value, option, path, root) for option in options):
            return []
        return [OutputProblem(path, " or ".join(expected(o) for o in options), quoted(value))]
    if "enum" in schema:
        if any(_same(value, allowed) for allowed in schema["enum"]):
            return []
        return [OutputProblem(path, expected(schema), quoted(value))]
    if "const" in schema:
        ok = _same(value, schema["const"])
        return [] if ok else [OutputProblem(path, expected(schema), quoted(value))]
    kind = schema.get("type")
    if kind is None:
        return []
    if isinstance(kind, list):
        if any(_is(value, k) for k in kind):
            kind = next(k for k in kind if _is(value, k))
        else:
            return [OutputProblem(path, expected(schema), quoted(value))]
    if not _is(value, kind):
        return [OutputProblem(path, expected(schema), quoted(value))]
    if kind == "array":
        items = schema.get("items") or {}
        return [p for i, item in enumerate(value)
                for p in check(item, items, f"{path}[{i}]", root)]
    if kind == "object":
        return _object_problems(value, schema, path, root)
    return []


def _referenced(ref: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema a local ``$ref`` names; an empty schema (anything fits) for any other."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return {}
    found: Any = root
    for part in ref[2:].split("/"):
        found = found.get(part.replace("~1", "/").replace("~0", "~")) \
            if isinstance(found, Mapping) else None
    return found if isinstance(found, Mapping) and "$ref" not in found else {}


def _object_problems(value: dict[str, Any], schema: Mapping[str, Any],
                     path: str, root: Mapping[str, Any]) -> list[OutputProblem]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    # A nullable field may be left out: models not held to the strict schema do so.
    problems = [OutputProblem(f"{path}.{name}", f"{expected(properties.get(name, {}))} "
                              "(required)", "nothing")
                for name in schema.get("required") or ()
                if name not in value and check(None, properties.get(name, {}), path, root)]
    for name, item in value.items():
        where = f"{path}.{name}" if name.isidentifier() else f"{path}[{json.dumps(name)}]"
        if name in properties:
            problems.extend(check(item, properties[name], where, root))
        elif schema.get("additionalProperties") is False:
            problems.append(OutputProblem(where, "no such field (known: " +
                                          ", ".join(properties) + ")", quoted(item)))
    return problems


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, object))


def _same(value: Any, allowed: Any) -> bool:
    return value == allowed and isinstance(value, bool) == isinstance(allowed, bool)


def expected(schema: Mapping[str, Any]) -> str:
    """What ``schema`` asks for, in words."""
    if "enum" in schema:
        return "one of " + ", ".join(quoted(v) for v in schema["enum"])
    if "const" in schema:
        return quoted(schema["const"])
    if "anyOf" in schema:
        return " or ".join(expected(o) for o in schema["anyOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(_NAMES.get(str(k), str(k)) for k in kind)
    if kind == "array":
        return f"a list of {_plural(expected(schema.get('items') or {}))}"
    if kind == "object" and schema.get("properties"):
        return "an object with " + ", ".join(schema["properties"])
    return _NAMES.get(str(kind), "any value")


def _plural(words: str) -> str:
    return words.removeprefix("a ").removeprefix("an ")
