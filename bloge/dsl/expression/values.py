"""The value semantics of the expression language: truth, equality, text, type names."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping, Sequence, Sized
from typing import Any

_MISSING: Any = object()


def truthy(value: Any) -> bool:
    """``null``, ``false``, ``0``, ``""`` and empty lists or maps are false; the rest true."""
    if value is None:
        return False
    if isinstance(value, (bool, int, float, str, dt.timedelta, Sized)):
        return bool(value)
    return True


def equals(left: Any, right: Any) -> bool:
    """Equality without Python's ``True == 1``: booleans only equal booleans."""
    if type(left) is bool or type(right) is bool:
        return type(left) is type(right) and left == right
    try:
        return bool(left == right)
    except Exception:
        return False


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and type(value) is not bool


def type_name(value: Any) -> str:
    """The expression language's name for the type of ``value``."""
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case dt.timedelta():
            return "duration"
        case Mapping():
            return "map"
        case Sequence():
            return "list"
    return type(value).__name__


def to_text(value: Any) -> str:
    """How a value reads inside a string: ``null``, ``true``, numbers, JSON for containers."""
    match value:
        case str():
            return value
        case None:
            return "null"
        case bool():
            return "true" if value else "false"
        case int() | float():
            return repr(value)
        case list() | tuple() | dict():
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def read_member(target: Any, name: str) -> Any:
    """``target.name``: a map key, a dataclass field or a pydantic field; ``_MISSING`` if the
    target has no such member kind at all (not a map or record)."""
    if isinstance(target, Mapping):
        return target.get(name)
    if name.startswith("_"):
        return _MISSING
    if dataclasses.is_dataclass(target) and not isinstance(target, type):
        fields = {f.name for f in dataclasses.fields(target)}
        return getattr(target, name) if name in fields else None
    model_fields = getattr(type(target), "model_fields", None)
    if isinstance(model_fields, Mapping):
        return getattr(target, name, None) if name in model_fields else None
    return _MISSING


MISSING = _MISSING
