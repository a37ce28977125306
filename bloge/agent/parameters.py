"""The named parameters of a typed function, as the JSON schema a model reads.

``def add(a: int, b: int)`` takes the arguments object ``{"a": <integer>, "b": <integer>}``:
one property per parameter, typed by pydantic from the annotation (``Annotated[int,
Field(description=…)]`` describes a parameter to the model), required unless the parameter
has a default, and no others allowed. Every way of making a tool of such a function (an
``Agent``'s function tool, an ``AgentBuilder`` or DSL tool whose operator it is) asks this
module, so that the model sees one schema for one function.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, NotRequired, Required

from pydantic import ConfigDict, Field, TypeAdapter
from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from bloge.core.errors import BlogeUsageError

#: Called through ``Any``: the type checker only knows TypedDicts with literal fields.
_typed_dict: Any = TypedDict

_UNNAMED = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**",
            inspect.Parameter.POSITIONAL_ONLY: ""}


def arguments_adapter(function: Callable[..., Any], name: str) -> TypeAdapter[dict[str, Any]]:
    """The pydantic adapter that validates the arguments object of ``function`` (the tool
    ``name``); ``BlogeUsageError`` when a parameter cannot be sent by a model."""
    try:
        return TypeAdapter(_arguments_type(function, name))
    except PydanticUserError as exc:
        raise BlogeUsageError(f"tool {name!r}: its parameters have no JSON schema: {exc}") from exc


def parameters_schema(adapter: TypeAdapter[dict[str, Any]], name: str) -> dict[str, Any]:
    """The JSON schema of the arguments object ``adapter`` validates."""
    try:
        return adapter.json_schema(schema_generator=_ToolSchema)
    except PydanticUserError as exc:
        raise BlogeUsageError(f"tool {name!r}: its parameters have no JSON schema: {exc}") from exc


def function_parameters(function: Callable[..., Any], name: str) -> dict[str, Any]:
    """The JSON schema of the arguments object of ``function``, the tool ``name``."""
    return parameters_schema(arguments_adapter(function, name), name)


def _arguments_type(function: Callable[..., Any], name: str) -> Any:
    """A ``TypedDict`` with one key per parameter of ``function``."""
    try:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError, ValueError) as exc:
        raise BlogeUsageError(f"tool {name!r}: cannot read the parameters of "
                              f"{function!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in _UNNAMED:
            raise BlogeUsageError(
                f"tool {name!r}: parameter {_UNNAMED[parameter.kind]}{parameter.name} cannot "
                "be sent by a model, which names each argument; use named parameters")
        annotation = hints.get(parameter.name, Any)
        if parameter.default is inspect.Parameter.empty:
            fields[parameter.name] = Required[annotation]
        elif _is_json_scalar(parameter.default):
            fields[parameter.name] = NotRequired[Annotated[annotation,
                                                           Field(default=parameter.default)]]
        else:  # the function's own default applies; the schema cannot show it
            fields[parameter.name] = NotRequired[annotation]
    arguments = _typed_dict(name, fields)
    arguments.__pydantic_config__ = ConfigDict(extra="forbid")
    return arguments


def _is_json_scalar(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class _ToolSchema(GenerateJsonSchema):
    """pydantic's JSON schema without the titles it makes from names (``"A"`` for ``a``):
    the model reads the names themselves, and titles only cost tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        generated = super().generate(schema, mode)
        generated.pop("title", None)
        return generated
