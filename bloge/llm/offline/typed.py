"""The offline model's typed answers: a value that fits the requested schema, filled from the
conversation where it can be.

A field takes, in order: a tool result's field of the same name that fits; for a choice of
values, the one the user's message names; for text, the offline answer from the tool results
(the user's message when no tool ran); for a number,
the first number in the user's message; else the plainest value that fits (``false``, an
empty list, ``null`` for an optional field, the first choice).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bloge.llm.messages import LlmMessage

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def typed_answer(schema: Mapping[str, Any], messages: Sequence[LlmMessage], text: str) -> Any:
    """A value of ``schema`` for the conversation ``messages``, whose answer in words is
    ``text``."""
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    found: dict[str, Any] = {}
    answered = False
    for message in messages:
        if message.role == "tool":
            answered = True
            if not message.is_error:
                _collect(_decoded(message.content), found)
    # Without tool results the offline answer is only its note on what it is: the user's
    # own words fill the text fields instead.
    return _Filler(found, user, text if answered else user).value(schema, None)


def _decoded(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _collect(value: Any, found: dict[str, Any]) -> None:
    """Every field of ``value``'s objects, nested ones too; the first of a name wins."""
    if isinstance(value, dict):
        for key, item in value.items():
            found.setdefault(str(key), item)
            _collect(item, found)
    elif isinstance(value, list):
        for item in value:
            _collect(item, found)


class _Filler:
    __slots__ = ("found", "text", "user")

    def __init__(self, found: dict[str, Any], user: str, text: str) -> None:
        self.found, self.user, self.text = found, user, text

    def value(self, schema: Mapping[str, Any], name: str | None) -> Any:
        if name is not None and name in self.found and _fits(self.found[name], schema):
            return self.found[name]
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            options = list(schema["enum"])
            said = self.user.lower()
            return next((o for o in options if isinstance(o, str) and o.lower() in said),
                        options[0] if options else None)
        if "anyOf" in schema:
            options = [o for o in schema["anyOf"] if o.get("type") != "null"]
            if len(options) < len(schema["anyOf"]) and name not in self.found:
                return None
            return self.value(options[0], name) if options else None
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        match kind:
            case "object":
                properties: Mapping[str, Any] = schema.get("properties") or {}
                return {key: self.value(sub, key) for key, sub in properties.items()}
            case "array":
                return []
            case "string":
                return self.text or self.user
            case "integer" | "number":
                number = _NUMBER.search(self.user)
                if number is None:
                    return 0
                read = float(number.group())
                return int(read) if kind == "integer" else read
            case "boolean":
                return False
        return None


def _fits(value: Any, schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    kinds: dict[str, type | tuple[type, ...]] = {
        "string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
        "object": dict}
    if "enum" in schema:
        return value in schema["enum"]
    if "anyOf" in schema:
        return any(_fits(value, option) for option in schema["anyOf"])
    if kind == "null":
        return value is None
    if isinstance(kind, str) and kind in kinds:
        if isinstance(value, bool) and kind != "boolean":
            return False
        return isinstance(value, kinds[kind]) and (kind not in ("object", "array") or
                                                   _deep_fits(value, schema))
    return False


def _deep_fits(value: Any, schema: Mapping[str, Any]) -> bool:
    if isinstance(value, list):
        items = schema.get("items") or {}
        return not items or all(_fits(item, items) for item in value)
    properties: Mapping[str, Any] = schema.get("properties") or {}
    return (set(schema.get("required") or ()) <= set(value)
            and all(_fits(value[key], sub) for key, sub in properties.items() if key in value)
            and (schema.get("additionalProperties") is not False or set(value) <= set(properties)))
