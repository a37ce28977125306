"""Operators: the units of work a graph node (or an agent's tool) runs.

An operator is anything with ``execute(input, ctx)`` — sync or async — or a plain function
``fn(input, ctx)`` / ``fn(input)``. A plain function whose parameters are all annotated, two
or more, none of them an ``OperatorContext`` (``def add(a: int, b: int)``), takes named
arguments instead: its input is a mapping and it is called ``fn(**input)``; an agent tool
passes it the model's arguments whole. :func:`bind` inspects it once and returns a
:class:`BoundOperator` whose ``invoke`` is always awaitable: sync code runs on a
:class:`~bloge.core.workers.WorkerPool` thread so that the event loop, concurrency caps,
timeouts and cancellation keep working around it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bloge.core.context import OperatorContext
from bloge.core.errors import OperatorInputError
from bloge.core.workers import DEFAULT_WORKERS, WorkerPool


@runtime_checkable
class Operator(Protocol):
    """The operator protocol. ``execute`` may be a coroutine function."""

    def execute(self, input: Any, ctx: OperatorContext) -> Any:
        ...


@dataclass(frozen=True, slots=True)
class OperatorMetadata:
    """What an operator tells a model about itself (Chapter 7, "Designing Good Operators").

    An agent tool whose DSL ``description`` is empty is described to the model with these.
    ``idempotent`` says that running the operator twice with the same input does no harm: a
    recorded run resumed after a crash runs such a call again when its outcome is unknown
    (others are reported to the model as of unknown outcome instead). ``input_schema``, when
    the operator knows the JSON schema of its input (an MCP tool does), is the agent tool's
    schema: whole without an ``input`` block, else for the properties passed through.
    """

    prompt_hint: str = ""
    usage_example: str = ""
    constraints_description: str = ""
    idempotent: bool = False
    input_schema: Mapping[str, Any] | None = field(default=None, hash=False)

    def describe(self) -> str:
        """One tool description: the hint, then the example and constraints when present."""
        parts = [self.prompt_hint.strip()]
        if self.usage_example.strip():
            parts.append(f"Example: {self.usage_example.strip()}")
        if self.constraints_description.strip():
            parts.append(f"Constraints: {self.constraints_description.strip()}")
        return "\n".join(p for p in parts if p)


def operator_metadata(operator: object) -> OperatorMetadata:
    """The operator's ``metadata`` attribute, or a hint taken from its docstring (and its
    ``idempotent`` attribute, when it has one)."""
    declared = getattr(operator, "metadata", None)
    if isinstance(declared, OperatorMetadata):
        return declared
    if callable(operator) and not hasattr(operator, "execute"):
        doc = inspect.getdoc(operator)
    else:
        doc = _class_doc(type(operator))
    first_paragraph = doc.split("\n\n", 1)[0].replace("\n", " ").strip() if doc else ""
    return OperatorMetadata(prompt_hint=first_paragraph,
                            idempotent=getattr(operator, "idempotent", False) is True)


def _class_doc(cls: type) -> str | None:
    """The docstring of ``cls`` or of a base class of the application's; never one of the
    protocol's or Python's (``inspect.getdoc`` would give an undocumented ``Operator``
    subclass the text "The operator protocol…", which the model would read as its tool's
    description)."""
    for klass in cls.__mro__:
        if klass in _PROTOCOL_CLASSES:
            return None
        doc = klass.__dict__.get("__doc__")
        if isinstance(doc, str):
            return inspect.cleandoc(doc)
    return None


_PROTOCOL_CLASSES = frozenset({object, Operator, Protocol, typing.Generic})


class BoundOperator:
    """An operator inspected once, ready to be invoked many times.

    A sync operator runs on ``workers`` (default :data:`~bloge.core.workers.DEFAULT_WORKERS`);
    when the awaiting task is cancelled or times out, ``invoke`` returns at once and the thread
    runs on until the function returns (see :mod:`bloge.core.workers` for what that costs).
    """

    __slots__ = ("_call", "_convert", "_signature", "_takes_ctx", "_workers", "input_type",
                 "is_async", "name", "takes_keywords", "target")

    def __init__(self, name: str, target: object, *, workers: WorkerPool | None = None) -> None:
        call = _entry_point(name, target)
        self.name = name
        self.target = target
        self._workers = workers if workers is not None else DEFAULT_WORKERS
        self._call = call
        self.is_async = inspect.iscoroutinefunction(call)
        # A function of named arguments (see the module's docstring) is called fn(**input).
        self.takes_keywords = call is target and _takes_keywords(call)
        # Read once: each call's arguments are checked against it.
        self._signature = inspect.signature(call) if self.takes_keywords else None
        self._takes_ctx = not self.takes_keywords and _positional_arity(call) >= 2
        self.input_type = None if self.takes_keywords else _input_annotation(call)
        self._convert = None if self.takes_keywords else _converter(self.input_type)

    def invoke(self, input: Any, ctx: OperatorContext) -> Coroutine[Any, Any, Any]:
        """Run the operator: await what this returns for its result. Sync operators run on a
        worker thread; an async operator's own coroutine is returned as it is, without one of
        ours around it (a run keeps every frame of its calls while they wait).

        A mapping given to an operator that declares a dataclass or pydantic-model input is
        converted first; ``OperatorInputError`` says why when it does not fit.
        """
        if self.takes_keywords:
            return self._invoke_with_keywords(input)
        # An input of the declared type already (the loop's LlmRequest) skips the check for a
        # mapping, an ABC check that costs a model call some 2%.
        if (self._convert is not None and type(input) is not self.input_type
                and isinstance(input, Mapping)):
            input = self._convert(input)
        if not self.is_async:
            return self._run_on_worker((input, ctx) if self._takes_ctx else (input,))
        coroutine: Coroutine[Any, Any, Any] = (self._call(input, ctx) if self._takes_ctx
                                               else self._call(input))
        return coroutine

    def _invoke_with_keywords(self, input: Any) -> Coroutine[Any, Any, Any]:
        keywords = _keywords(input)
        assert self._signature is not None
        try:
            self._signature.bind(**keywords)
        except TypeError as exc:
            raise OperatorInputError(f"{self.name}: {exc}") from None
        if not self.is_async:
            return self._run_on_worker((), keywords)
        coroutine: Coroutine[Any, Any, Any] = self._call(**keywords)
        return coroutine

    async def _run_on_worker(self, args: tuple[Any, ...],
                             keywords: Mapping[str, Any] | None = None) -> Any:
        result = await self._workers.run(functools.partial(self._call, **(keywords or {})),
                                         *args)
        if inspect.isawaitable(result):
            result = await result
        return result

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<BoundOperator {self.name!r} ({kind}) {self.target!r}>"


def bind(name: str, target: object, *, workers: WorkerPool | None = None) -> BoundOperator:
    """Inspect ``target`` as an operator; raise ``TypeError`` when it cannot be one."""
    return BoundOperator(name, target, workers=workers)


def _entry_point(name: str, target: object) -> Callable[..., Any]:
    # An object with an async twin of execute (an agent operator, say) is awaited directly
    # instead of running its sync facade in a worker thread.
    aexecute = getattr(target, "aexecute", None)
    if callable(aexecute) and inspect.iscoroutinefunction(aexecute):
        return aexecute  # type: ignore[no-any-return]  # getattr is untyped; checked callable
    execute = getattr(target, "execute", None)
    if callable(execute):
        return execute  # type: ignore[no-any-return]  # getattr is untyped; checked callable
    if callable(target) and not isinstance(target, type):
        return target
    raise TypeError(
        f"operator {name!r} must have an execute(input, ctx) method or be a function, "
        f"got {type(target).__name__}"
    )


def _positional_arity(call: Callable[..., Any]) -> int:
    try:
        signature = inspect.signature(call)
    except (TypeError, ValueError):  # builtins without a signature: assume the full protocol
        return 2
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = list(signature.parameters.values())
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(1 for p in params if p.kind in kinds)


def _takes_keywords(function: Callable[..., Any]) -> bool:
    """Whether ``function``'s parameters are named arguments rather than ``(input, ctx)``:
    two or more, every one annotated, none an ``OperatorContext`` (nor ``Any``)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
        hints = typing.get_type_hints(function)
    except (NameError, TypeError, ValueError):
        return False
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return len(parameters) >= 2 and all(
        p.kind in named and p.name in hints
        and hints[p.name] not in (OperatorContext, Any, object) for p in parameters
    )


def _keywords(input: Any) -> dict[str, Any]:
    if not isinstance(input, Mapping) or not all(isinstance(key, str) for key in input):
        raise OperatorInputError(
            f"a function of named arguments takes a mapping of them, got {type(input).__name__}")
    return dict(input)


def _input_annotation(call: Callable[..., Any]) -> Any:
    """The declared type of the operator's input parameter, or ``None``."""
    try:
        hints = typing.get_type_hints(call)
        first = next(iter(inspect.signature(call).parameters))
    except (NameError, TypeError, ValueError, StopIteration):
        return None
    return hints.get(first)


def _converter(input_type: Any) -> Callable[[Mapping[str, Any]], Any] | None:
    """How to turn a mapping into the operator's declared input type, if it declares one."""
    if not isinstance(input_type, type):
        return None
    if dataclasses.is_dataclass(input_type):
        def to_dataclass(values: Mapping[str, Any]) -> Any:
            try:
                return input_type(**values)
            except TypeError as exc:
                raise OperatorInputError(f"{input_type.__name__}: {exc}") from exc

        return to_dataclass
    validate = getattr(input_type, "model_validate", None)
    if callable(validate):
        def to_model(values: Mapping[str, Any]) -> Any:
            try:
                return validate(values)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                raise OperatorInputError(str(exc)) from exc

        return to_model
    return None

