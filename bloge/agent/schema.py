"""Tool schema inference: from a tool's ``input { … }`` bindings to a JSON-schema object.

Every ``tool_args.<field>`` path becomes a required property (optional when it sits on the
left of ``??``, which supplies a default). ``tool_args.a.b`` makes ``a`` an object with a
required ``b``; ``tool_args.items[0]`` makes ``items`` an array (of strings, or of objects
when the path goes on: ``tool_args.items[0].sku``). A property is a ``string`` unless the
operator declares a typed input (a dataclass, ``TypedDict`` or pydantic model as the
annotation of its input parameter) whose field of the same name says better, or declares its
schema (an MCP tool, or a function of named arguments whose schema is
:func:`bloge.agent.parameters.function_parameters`, the one its ``Agent(llm, [function])``
tool has). Bindings that read no ``tool_args`` never reach the schema.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeAlias

from bloge.dsl import syntax as s

TOOL_ARGS = "tool_args"
_STRING: dict[str, Any] = {"type": "string"}


def empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "required": []}


def infer_parameters(
    bindings: Mapping[str, s.Expr] | None, input_type: Any = None, *,
    declared: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON-schema ``parameters`` object of a tool.

    Without bindings (no ``input`` block) the operator receives the arguments whole, and the
    schema is the one the operator ``declared`` (an MCP tool's, a function of named
    arguments'), else comes from its declared
    input type when it has one. With bindings, a property passed through unchanged
    (``query = tool_args.query``) takes its schema from ``declared`` or the input type.
    """
    if bindings is None:
        if declared is not None:
            return copy.deepcopy(dict(declared))
        typed = schema_for_type(input_type) if input_type is not None else None
        return typed if typed and typed.get("type") == "object" else empty_object_schema()
    fields = input_fields(input_type)
    properties = (declared or {}).get("properties")
    known = properties if isinstance(properties, Mapping) else {}
    schema = empty_object_schema()
    for key, node in bindings.items():
        for path, optional in tool_args_paths(node):
            leaf: Mapping[str, Any] = _STRING
            if len(path) == 1 and _is_direct(node, path) and key in fields:
                leaf = schema_for_type(fields[key][0]) or _STRING
            elif len(path) == 1 and _is_direct(node, path) and isinstance(known.get(key),
                                                                          Mapping):
                leaf = copy.deepcopy(dict(known[key]))
            _add_path(schema, path, leaf, required=not optional)
    return schema


class _Item:
    """A step into an array in a path: the ``[0]`` of ``tool_args.items[0]``."""

    def __repr__(self) -> str:
        return "[item]"


ITEM = _Item()
PathStep: TypeAlias = str | _Item


def tool_args_paths(
    node: s.Expr, *, optional: bool = False
) -> Iterator[tuple[tuple[PathStep, ...], bool]]:
    """Each longest ``tool_args`` path in ``node``, with whether a ``??`` default covers it.

    A path is field names, with :data:`ITEM` where a whole-number index reads an array item.
    """
    chain = _chain(node)
    if chain is not None:
        if chain:
            yield chain, optional
        return
    match node:
        case s.Binary("??", left, right):
            yield from tool_args_paths(left, optional=True)
            yield from tool_args_paths(right, optional=optional)
        case s.Index(target, index):
            yield from tool_args_paths(target, optional=optional)
            yield from tool_args_paths(index, optional=optional)
        case _:
            for child in _children(node):
                yield from tool_args_paths(child, optional=optional)


def _chain(node: s.Expr) -> tuple[PathStep, ...] | None:
    match node:
        case s.Var(name):
            return () if name == TOOL_ARGS else None
        case s.Member(target, name):
            head = _chain(target)
            return None if head is None else (*head, name)
        case s.Index(target, s.Literal(value)) if isinstance(value, str):
            head = _chain(target)
            return None if head is None else (*head, value)
        case s.Index(target, index) if _is_item_index(index):
            head = _chain(target)
            return None if not head else (*head, ITEM)
    return None


def _is_item_index(node: s.Expr) -> bool:
    """``0``, ``-1``: a literal whole number, which reads an item of an array."""
    if isinstance(node, s.Unary) and node.op == "-":
        node = node.operand
    return isinstance(node, s.Literal) and type(node.value) is int


def _children(node: s.Expr) -> Sequence[s.Expr]:
    match node:
        case s.Interpolation(parts):
            return [p for p in parts if not isinstance(p, str)]
        case s.Member(target) | s.Unary(_, target):
            return [target]
        case s.Binary(_, left, right):
            return [left, right]
        case s.Ternary(condition, then, otherwise):
            return [condition, then, otherwise]
        case s.Call(_, args):
            return list(args)
        case s.ListExpr(items):
            return list(items)
        case s.MapExpr(entries):
            return [v for _, v in entries]
    return []


def _is_direct(node: s.Expr, path: tuple[PathStep, ...]) -> bool:
    return _chain(node) == path


def _add_path(
    schema: dict[str, Any], path: tuple[PathStep, ...], leaf: Mapping[str, Any], *,
    required: bool
) -> None:
    """Add the property ``path`` to the object ``schema`` (whose first step is a field)."""
    head, rest = path[0], path[1:]
    assert isinstance(head, str)  # an item step always follows a field (see _chain)
    properties: dict[str, dict[str, Any]] = schema.setdefault("properties", {})
    properties[head] = _value_schema(properties.get(head), rest, leaf, required=required)
    required_list: list[str] = schema.setdefault("required", [])
    if required and head not in required_list:
        required_list.append(head)


def _value_schema(
    existing: dict[str, Any] | None, rest: tuple[PathStep, ...], leaf: Mapping[str, Any], *,
    required: bool
) -> dict[str, Any]:
    """The schema of a value that ``rest`` more steps lead into, merged with what an earlier
    path said about it: an object or array wins over a leaf."""
    if not rest:
        if existing is not None and existing.get("type") in ("object", "array"):
            return existing
        return dict(leaf)
    if isinstance(rest[0], _Item):
        array: dict[str, Any] = (existing if existing is not None
                                 and existing.get("type") == "array" else {"type": "array"})
        array["items"] = _value_schema(array.get("items"), rest[1:], leaf, required=required)
        return array
    child = existing if existing is not None and existing.get("type") == "object" else (
        empty_object_schema())
    _add_path(child, rest, leaf, required=required)
    return child


# ---------------------------------------------------------------------------- Python types


def input_fields(input_type: Any) -> dict[str, tuple[Any, bool]]:
    """Field name → (type, required) of a dataclass, ``TypedDict`` or pydantic model."""
    if input_type is None or not isinstance(input_type, type):
        return {}
    try:
        hints = typing.get_type_hints(input_type)
    except (NameError, TypeError):
        return {}
    if dataclasses.is_dataclass(input_type):
        return {
            f.name: (hints.get(f.name, Any), f.default is dataclasses.MISSING
                     and f.default_factory is dataclasses.MISSING)
            for f in dataclasses.fields(input_type)
        }
    if typing.is_typeddict(input_type):
        required_keys: frozenset[str] = getattr(input_type, "__required_keys__", frozenset())
        return {name: (tp, name in required_keys) for name, tp in hints.items()}
    model_fields = getattr(input_type, "model_fields", None)
    if isinstance(model_fields, Mapping):
        return {
            name: (getattr(info, "annotation", Any), bool(info.is_required()))
            for name, info in model_fields.items()
        }
    return {}


def schema_for_type(tp: Any) -> dict[str, Any] | None:
    """The JSON schema of a Python type annotation, or ``None`` when it says nothing useful."""
    if tp is Any or tp is object or tp is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        concrete = [a for a in args if a is not type(None)]
        return schema_for_type(concrete[0]) if len(concrete) == 1 else None
    if origin is typing.Literal:
        schema = schema_for_type(type(args[0])) or {}
        return {**schema, "enum": list(args)}
    if origin is typing.Annotated:
        return schema_for_type(args[0])
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if tp in simple:
        return {"type": simple[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    fields = input_fields(tp)
    if fields:
        return {
            "type": "object",
            "properties": {name: schema_for_type(t) or {} for name, (t, _) in fields.items()},
            "required": [name for name, (_, required) in fields.items() if required],
        }
    container = origin or tp
    if isinstance(container, type) and issubclass(container, Mapping):
        return {"type": "object"}
    if isinstance(container, type) and issubclass(container, (list, tuple, set, frozenset,
                                                              Sequence)) and container is not str:
        items = schema_for_type(args[0]) if args else None
        return {"type": "array", "items": items} if items else {"type": "array"}
    return None
