"""A model's tool arguments: parsed from JSON and checked against the tool's schema.

The schema check covers what bloge's schemas say — object, required, properties and their
``type``/``enum``, nested objects and array items — and reports every problem in words a
model can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.core.codec import JsonCodec

#: How deeply a tool's arguments may nest objects and arrays. Deeper arguments are a tool
#: error for the model to fix, not a ``RecursionError`` in whatever walks them next (the
#: schema check, the operator, a JSON encoder).
MAX_DEPTH = 32
_TOO_DEEP = (f"the arguments nest objects and arrays more than {MAX_DEPTH} levels deep; "
             "send flatter arguments")

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


class ArgumentsError(ValueError):
    """The arguments a model sent cannot be used; the message says why."""


def parse_arguments(text: str, codec: JsonCodec) -> dict[str, Any]:
    """The arguments object; ``ArgumentsError`` when the text is not a JSON object or nests
    objects and arrays deeper than :data:`MAX_DEPTH`."""
    if not text or not text.strip():
        return {}
    try:
        value = codec.decode(text)
    except ValueError as exc:
        raise ArgumentsError(
            f"the arguments are not valid JSON ({exc}); send a JSON object"
        ) from None
    except RecursionError:  # nested past the interpreter's own limit
        raise ArgumentsError(_TOO_DEEP) from None
    # Fewer brackets than the limit cannot nest past it: the common case skips the walk.
    if text.count("{") + text.count("[") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise ArgumentsError(_TOO_DEEP)
    if not isinstance(value, dict):
        raise ArgumentsError(f"the arguments must be a JSON object, got {_json_type(value)}")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays in ``value`` nest more than ``limit`` levels (iteratively,
    so that depth itself cannot overflow the stack)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return any(isinstance(item, (dict, list)) for item in level)


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Raise ``ArgumentsError`` listing every way ``arguments`` break ``schema``."""
    problems: list[str] = []
    _check_object(schema, arguments, "", problems)
    if problems:
        raise ArgumentsError("; ".join(problems))


def _check_object(schema: Mapping[str, Any], value: Mapping[str, Any], path: str,
                  problems: list[str]) -> None:
    problems.extend(
        f"missing required argument '{path}{name}'"
        for name in schema.get("required", ())
        if value.get(name) is None
    )
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for name, item in value.items():
        if name in properties and item is not None:
            _check_value(properties[name], item, f"{path}{name}", problems)


def _check_value(schema: Mapping[str, Any], value: Any, path: str, problems: list[str]) -> None:
    expected = schema.get("type")
    if isinstance(expected, str) and expected in _JSON_TYPES and not _is(value, expected):
        problems.append(f"argument '{path}' must be {_article(expected)}, got {_json_type(value)}")
        return
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(c) for c in schema["enum"])
        problems.append(f"argument '{path}' must be one of {choices}, got {value!r}")
    if expected == "object" and isinstance(value, dict):
        _check_object(schema, value, f"{path}.", problems)
    elif expected == "array" and isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _check_value(items, item, f"{path}[{index}]", problems)


def _is(value: Any, json_type: str) -> bool:
    if isinstance(value, bool) and json_type in ("integer", "number"):
        return False
    if json_type == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[json_type])


def _json_type(value: Any) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int():
            return "an integer"
        case float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case dict():
            return "an object"
    return type(value).__name__


def _article(json_type: str) -> str:
    return {"integer": "an integer", "object": "an object", "array": "an array"}.get(
        json_type, f"a {json_type}"
    )
