"""What a path may reach inside a value: its data, never its Python attributes.

A *field* of a value is a key of a mapping, an item of a sequence, a field of a dataclass
instance or a field of a pydantic model instance. Nothing else is reachable: not methods,
properties, dunders, module globals, classes or the attributes of other objects. Dotted
context lookups (``ctx.get("user.locale")``) and every path of the expression language go
through here, so that a path written in a DSL file — or chosen by a model, as in
``ctx[tool_args.key]`` — can read data and nothing more.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

MISSING: Any = object()
"""Returned when a value has no such field, or is not data at all."""


def read_field(target: Any, name: str) -> Any:
    """The field ``name`` of ``target``, or :data:`MISSING`.

    Mappings answer with their key ``name``; dataclass and pydantic model instances with a
    declared field of that name. Any other value has no fields.
    """
    if isinstance(target, Mapping):
        return target.get(name, MISSING)
    fields = record_fields(target)
    if fields is None or name not in fields:
        return MISSING
    if isinstance(fields, _PydanticFields):
        return target.__dict__.get(name, MISSING)
    return getattr(target, name, MISSING)


def read_item(target: Any, index: int) -> Any:
    """Item ``index`` (negative counts from the end) of a list or tuple, or :data:`MISSING`."""
    if isinstance(target, (list, tuple)) and -len(target) <= index < len(target):
        return target[index]
    return MISSING


def read_path(target: Any, parts: Sequence[str]) -> Any:
    """Follow ``parts`` from ``target``: field names, or whole numbers for list items."""
    value = target
    for part in parts:
        if value is None:
            return MISSING
        if isinstance(value, (list, tuple)):
            index = _index_of(part)
            value = MISSING if index is None else read_item(value, index)
        else:
            value = read_field(value, part)
        if value is MISSING:
            return MISSING
    return value


def is_record(target: Any) -> bool:
    """Whether ``target`` is a dataclass or pydantic model instance (a value with fields)."""
    return record_fields(target) is not None


def record_fields(target: Any) -> tuple[str, ...] | None:
    """The readable field names of a dataclass or pydantic model instance, in declaration
    order (``None`` for any other value). Names starting with ``_`` are private by
    convention and never readable."""
    if isinstance(target, type):
        return None
    cls: Any = type(target)  # classes are hashable: they key the cache
    return _fields_of(cls)


@functools.lru_cache(maxsize=512)
def _fields_of(cls: Any) -> tuple[str, ...] | None:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls) if not f.name.startswith("_"))
    # pydantic's own table of declared fields; computed fields and properties are not in it.
    declared = getattr(cls, "__pydantic_fields__", None)
    if isinstance(declared, Mapping):
        return _PydanticFields(name for name in declared if not name.startswith("_"))
    return None


class _PydanticFields(tuple[str, ...]):
    """Field names of a pydantic model, whose values live in the instance ``__dict__``."""

    __slots__ = ()


def _index_of(part: str) -> int | None:
    digits = part[1:] if part[:1] == "-" else part
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MAX_INDEX_DIGITS:
        return None
    return int(part)


_MAX_INDEX_DIGITS = 18  # past any list's length; keeps int() clear of Python's digit limit
