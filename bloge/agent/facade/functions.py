"""Plain typed functions as tools: a JSON schema from the signature, validated keyword calls.

``def add(a: int, b: int) -> int`` with the docstring ``"Add two integers."`` becomes the
tool ``add``. Its description is the docstring's first paragraph; its schema has one property
per parameter, typed by pydantic from the annotation (``Annotated[int, Field(description=…)]``
describes a parameter to the model), required unless the parameter has a default, and no
others allowed. Each call validates the model's arguments with pydantic (a dataclass or
pydantic-model parameter is built from its JSON object) and calls the function with them as
keyword arguments. Arguments that do not fit are a tool error for the model to correct,
never an exception of the run.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NotRequired, Required

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from bloge.agent.facade.tools import ToolOperator, call_operator
from bloge.core.errors import BlogeUsageError, OperatorInputError
from bloge.core.operator import operator_metadata

#: Called through ``Any``: the type checker only knows TypedDicts with literal fields.
_typed_dict: Any = TypedDict

_UNNAMED = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**",
            inspect.Parameter.POSITIONAL_ONLY: ""}


def function_tool(function: Callable[..., Any], name: str) -> ToolOperator:
    """The tool ``name`` that calls ``function`` with the model's validated arguments."""
    try:
        adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(_arguments_type(function, name))
        schema = adapter.json_schema(schema_generator=_ToolSchema)
    except PydanticUserError as exc:
        raise BlogeUsageError(f"tool {name!r}: its parameters have no JSON schema: {exc}") from exc
    return ToolOperator(name, operator_metadata(function).prompt_hint, schema,
                        call_operator(function, _validator(adapter)))


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


def _validator(
    adapter: TypeAdapter[dict[str, Any]],
) -> Callable[[Mapping[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]:
    def keyword_arguments(arguments: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        try:
            return (), dict(adapter.validate_python(arguments))
        except ValidationError as exc:
            problems = exc.errors(include_url=False, include_input=False, include_context=False)
            raise OperatorInputError("; ".join(map(_problem, problems))) from exc

    return keyword_arguments


def _problem(error: ErrorDetails) -> str:
    path = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in error["loc"])
    return f"argument {path.lstrip('.')!r}: {error['msg']}" if path else error["msg"]


class _ToolSchema(GenerateJsonSchema):
    """pydantic's JSON schema without the titles it makes from names (``"A"`` for ``a``):
    the model reads the names themselves, and titles only cost tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        generated = super().generate(schema, mode)
        generated.pop("title", None)
        return generated
