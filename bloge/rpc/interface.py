"""What an RPC interface is made of: a ``typing.Protocol`` whose public methods are all
``async def``, read once into :class:`MethodSpec` values that validate and serialize.

Arguments travel as one JSON object, by parameter name (so that a parameter added with a
default keeps old callers working); a result as the JSON of its declared return type. Both
are validated with pydantic on both sides of a call.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PydanticSchemaGenerationError,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)

from bloge.core.errors import BlogeUsageError
from bloge.rpc.errors import RemoteError

F = TypeVar("F", bound=Callable[..., Any])
_IDEMPOTENT = "__bloge_rpc_idempotent__"
_ARGUMENTS = ConfigDict(extra="forbid", arbitrary_types_allowed=False)


def idempotent(method: F) -> F:
    """Mark an interface method as safe to run twice with the same arguments: its calls are
    retried when the service is unavailable or the deadline passes."""
    setattr(method, _IDEMPOTENT, True)
    return method


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method of an interface: its signature, and the validators of its arguments
    (a pydantic model, one field per parameter) and of its result."""

    name: str
    signature: inspect.Signature
    arguments: type[BaseModel]
    result: TypeAdapter[Any]
    idempotent: bool
    doc: str
    positional: tuple[str, ...]
    """The parameters an argument may be passed to by position."""

    def encode_call(self, where: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """The JSON of a call's arguments; ``invalid_argument`` when they do not fit."""
        names = self.positional
        if len(args) <= len(names) and not any(
                key in names[:len(args)] or key not in self.arguments.model_fields
                for key in kwargs):
            # The common case, without inspect's bind: missing arguments are pydantic's to
            # name, as are all other mistakes in values.
            values = dict(zip(names, args, strict=False))
            values.update(kwargs)
            return self.encode_arguments(where, values)
        try:
            self.signature.bind(None, *args, **kwargs)
        except TypeError as exc:
            raise RemoteError("invalid_argument", f"{where}: {exc}") from None
        raise AssertionError("unreachable: such a call binds only when it fits")  # pragma: no cover

    def encode_arguments(self, where: str, values: dict[str, Any]) -> str:
        try:
            return self.arguments.model_validate(values).model_dump_json()
        except ValidationError as exc:
            raise invalid(where, "argument", exc) from None
        except ValueError as exc:  # pydantic's serialization error: not JSON-representable
            raise RemoteError("invalid_argument",
                              f"{where}: an argument cannot be sent as JSON: {exc}") from None

    def decode_arguments(self, where: str, payload: str) -> dict[str, Any]:
        try:
            model = self.arguments.model_validate_json(payload)
        except ValidationError as exc:
            raise invalid(where, "argument", exc) from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    def encode_result(self, where: str, value: Any) -> str:
        try:
            return self.result.dump_json(self.result.validate_python(value)).decode()
        except ValidationError as exc:
            raise RemoteError("internal", f"{where}: the implementation returned a result "
                              f"that does not fit its declared type: {_summary(exc)}") from None
        except ValueError as exc:
            raise RemoteError("internal", f"{where}: the result cannot be sent as JSON: "
                              f"{exc}") from None

    def decode_result(self, where: str, payload: str) -> Any:
        try:
            return self.result.validate_json(payload)
        except ValidationError as exc:
            raise RemoteError("internal", f"{where}: the reply does not fit the declared "
                              f"result type: {_summary(exc)}") from None


@functools.cache
def methods_of(interface: type) -> dict[str, MethodSpec]:
    """The methods of ``interface``; ``BlogeUsageError`` when it cannot be an RPC interface."""
    if not isinstance(interface, type):
        raise BlogeUsageError(f"an RPC interface is a class (a typing.Protocol), got "
                              f"{interface!r}")
    specs: dict[str, MethodSpec] = {}
    for name, member in _public_members(interface):
        if not inspect.iscoroutinefunction(member):
            raise BlogeUsageError(f"{interface.__name__}.{name} must be 'async def': every "
                                  "method of an RPC interface may wait on the network")
        specs[name] = _spec(interface, name, member)
    if not specs:
        raise BlogeUsageError(f"{interface.__name__} declares no public methods")
    return specs


def _public_members(interface: type) -> list[tuple[str, Any]]:
    found: dict[str, Any] = {}
    for klass in reversed(interface.__mro__):
        if klass in (object, typing.Protocol, typing.Generic):
            continue
        found.update({name: member for name, member in vars(klass).items()
                      if not name.startswith("_") and inspect.isfunction(member)})
    return sorted(found.items())


def _spec(interface: type, name: str, function: Callable[..., Any]) -> MethodSpec:
    where = f"{interface.__name__}.{name}"
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError) as exc:
        raise BlogeUsageError(f"{where}: its type hints do not resolve ({exc})") from exc
    fields: dict[str, Any] = {}
    for position, parameter in enumerate(signature.parameters.values()):
        if position == 0:
            continue  # self
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise BlogeUsageError(f"{where}: *{parameter.name} cannot be sent; name every "
                                  "parameter")
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise BlogeUsageError(f"{where}: {parameter.name} is positional-only; arguments "
                                  "travel by name")
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (hints.get(parameter.name, Any), default)
    try:
        arguments = create_model(f"{interface.__name__}_{name}_arguments",
                                 __config__=_ARGUMENTS, **fields)
        result: TypeAdapter[Any] = TypeAdapter(hints.get("return", Any))
    except (PydanticSchemaGenerationError, PydanticUserError) as exc:
        first_line = str(exc).split("\n", 1)[0]
        raise BlogeUsageError(f"{where}: its types cannot be sent as JSON ({first_line})") \
            from exc
    positional = tuple(p.name for i, p in enumerate(signature.parameters.values())
                       if i > 0 and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return MethodSpec(name, signature, arguments, result,
                      getattr(function, _IDEMPOTENT, False) is True,
                      inspect.getdoc(function) or "", positional)


def invalid(where: str, what: str, exc: ValidationError) -> RemoteError:
    """``invalid_argument`` naming each field that failed, in the message and the details."""
    errors = [{"field": ".".join(str(part) for part in error["loc"]), "message": error["msg"],
               "type": error["type"]} for error in exc.errors(include_url=False,
                                                               include_input=False)]
    return RemoteError("invalid_argument", f"{where}: {_summary(exc, what)}",
                       {"errors": errors})


def _summary(exc: ValidationError, what: str = "field") -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"])
        parts.append(f"{what} {location!r}: {error['msg']}" if location else error["msg"])
    return "; ".join(parts)
