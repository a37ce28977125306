"""Plain typed functions as tools: a JSON schema from the signature, validated keyword calls.

``def add(a: int, b: int) -> int`` with the docstring ``"Add two integers."`` becomes the
tool ``add``. Its description is the docstring's first paragraph; its schema is the one
:mod:`bloge.agent.parameters` makes of its parameters (the schema the same function has as
the operator of an ``AgentBuilder`` or DSL tool). Each call validates the model's arguments
with pydantic (a dataclass or pydantic-model parameter is built from its JSON object) and
calls the function with them as keyword arguments. Arguments that do not fit are a tool
error for the model to correct, never an exception of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from bloge.agent.facade.tools import ToolOperator, call_operator
from bloge.agent.parameters import arguments_adapter, parameters_schema
from bloge.core.errors import OperatorInputError
from bloge.core.operator import operator_metadata


def function_tool(function: Callable[..., Any], name: str) -> ToolOperator:
    """The tool ``name`` that calls ``function`` with the model's validated arguments (its
    schema is :func:`bloge.agent.parameters.function_parameters`)."""
    adapter = arguments_adapter(function, name)
    schema = parameters_schema(adapter, name)
    return ToolOperator(name, operator_metadata(function).prompt_hint, schema,
                        call_operator(function, _validator(adapter)))


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
