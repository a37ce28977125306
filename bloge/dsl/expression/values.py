"""The value semantics of the expression language: truth, equality, text, type names."""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
import uuid
from collections.abc import Mapping, Sequence, Sized
from typing import Any

from bloge.core.context import OperatorContext
from bloge.core.fields import MISSING, is_record, read_field, record_fields


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
    except Exception:  # noqa: BLE001 -- a value whose __eq__ raises equals nothing
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
    """How a value reads inside a string: ``null``, ``true``, numbers, JSON for containers.

    Only data is shown: maps, lists and records (dataclass and pydantic model fields) as
    JSON, dates, times, durations, decimals and UUIDs as their text, an enum member as its
    value. Anything else — an ``OperatorContext``, a function, a client object — reads as a
    placeholder such as ``<OperatorContext>``, so that ``"${ctx}"`` never dumps a context and
    no object's own ``__str__`` runs.
    """
    match value:
        case str():
            return value
        case None:
            return "null"
        case bool():
            return "true" if value else "false"
        case int() | float():
            return repr(value)
    shown = plain(value)
    if isinstance(shown, (dict, list)):
        return json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return to_text(shown)


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data (see :func:`to_text`); ``ValueError`` past
    :data:`MAX_DEPTH` levels of nesting (which a cycle reaches too)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if depth >= MAX_DEPTH:
        raise ValueError(f"the value is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, _TEXT_SCALARS):
        return str(value)
    if isinstance(value, enum.Enum):
        return plain(value.value, depth + 1)
    if isinstance(value, OperatorContext):
        return "<OperatorContext>"
    if isinstance(value, Mapping):
        return {_key_text(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    fields = record_fields(value)
    if fields is not None:
        return {name: plain(read_field(value, name), depth + 1) for name in fields}
    return f"<{type(value).__name__}>"


MAX_DEPTH = 100
_TEXT_SCALARS = (dt.date, dt.time, dt.timedelta, decimal.Decimal, uuid.UUID)


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else to_text(key)


def read_member(target: Any, name: str) -> Any:
    """``target.name``: a map key or a record field, ``null`` when absent; :data:`MISSING`
    when ``target`` is neither a map nor a record (nothing else has members)."""
    if isinstance(target, Mapping):
        return target.get(name)
    value = read_field(target, name)
    if value is MISSING and is_record(target):
        return None
    return value
