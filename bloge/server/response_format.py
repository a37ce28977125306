"""A Chat Completions client's ``response_format`` as the output schema of its run.

``text`` (or none) keeps the agent's own schema, if it has one (its answers are then JSON of
that schema); ``json_object`` asks for any JSON object, unless the agent's own schema already
says which (:func:`with_own_schema`); ``json_schema`` asks for that schema (``strict`` as the
client says), validated and repaired like any typed agent's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.agent import OutputSchema
from bloge.server.inputs import BadRequestError

_ANY_OBJECT = OutputSchema.from_json_schema("json_object", {"type": "object"}, strict=False)


def with_own_schema(sampling: Mapping[str, Any], own: OutputSchema | None) -> dict[str, Any]:
    """``sampling`` for an agent whose own schema is ``own``: a ``json_object`` request keeps
    that schema (its answers are JSON objects already, and of a known shape)."""
    changes = dict(sampling)
    if own is not None and changes.get("output") is _ANY_OBJECT:
        del changes["output"]
    return changes


def requested_output(response_format: Mapping[str, Any] | None) -> OutputSchema | None:
    """The schema ``response_format`` asks for (``None``: the agent's own);
    :class:`BadRequestError` naming the field that is wrong."""
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return _ANY_OBJECT
    if kind != "json_schema":
        raise BadRequestError("response_format.type: expected text, json_object or "
                              f"json_schema, got {kind!r}", param="response_format")
    spec = response_format.get("json_schema")
    if not isinstance(spec, Mapping):
        raise BadRequestError("response_format.json_schema: an object with name and schema "
                              "is required", param="response_format")
    name, schema, strict = spec.get("name"), spec.get("schema"), spec.get("strict")
    if not isinstance(name, str) or not name:
        raise BadRequestError("response_format.json_schema.name: a name is required",
                              param="response_format")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise BadRequestError("response_format.json_schema.schema: an object schema "
                              '({"type": "object", …}) is required', param="response_format")
    if strict is not None and not isinstance(strict, bool):
        raise BadRequestError("response_format.json_schema.strict: true or false",
                              param="response_format")
    return OutputSchema.from_json_schema(name, schema, strict=bool(strict))
