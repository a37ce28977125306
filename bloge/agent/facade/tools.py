"""The facade's tools: the runtime chapter's :class:`Tool` protocol, and plain typed functions.

Each becomes an operator in the agent's registry, so that the engine dispatches it like any
other tool: the model's arguments are parsed and checked against the tool's schema, a sync
``call`` or function runs on a worker thread, and every failure is fed back to the model as
a tool error.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from bloge.core.codec import DEFAULT_CODEC
from bloge.core.errors import BlogeUsageError

#: What providers accept as a tool name (OpenAI and Anthropic alike).
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The chapter's schema, for a tool that declares none: any arguments object.
ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


@runtime_checkable
class Tool(Protocol):
    """The runtime chapter's tool: a ``name``, a ``description``, and ``call(args)``.

    ``args`` is the JSON text of the arguments object the model sent (``{}`` when it sent
    none), re-encoded compactly after it was parsed and checked; ``call`` returns the text
    the model reads (any other value is sent as JSON) and may be a coroutine function. A tool
    may also have a ``parameters`` attribute, the JSON schema of its arguments object; without
    one the model sees ``{"type": "object"}``, as in the chapter.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def call(self, args: str) -> str | Awaitable[str]: ...


@dataclass(frozen=True, slots=True)
class ToolOperator:
    """One tool of an ``Agent``: what the model sees, and the operator that runs it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    operator: object


ToolLike: TypeAlias = Tool | ToolOperator | Callable[..., Any]
"""What an ``Agent`` takes as a tool: a :class:`Tool`, a plain typed function, or another
agent (``Agent.as_tool()``)."""


def tool_operator(tool: ToolLike) -> ToolOperator:
    """The operator of a :class:`Tool` or of a typed function (see :mod:`.functions`);
    ``BlogeUsageError`` when ``tool`` is neither or its name is not one a provider takes."""
    if isinstance(tool, ToolOperator):  # made already: Agent.as_tool()
        _named(tool.name, tool)
        return tool
    if isinstance(tool, type):
        raise BlogeUsageError(f"an Agent's tools are instances or functions: pass "
                              f"{tool.__name__}(), not the class {tool.__name__}")
    if isinstance(tool, Tool):
        return _protocol_tool(tool)
    if callable(tool):
        from bloge.agent.facade.functions import function_tool  # noqa: PLC0415 -- loads pydantic: on first use

        return function_tool(tool, _named(getattr(tool, "__name__", None), tool))
    raise BlogeUsageError(
        f"an Agent's tool must be a Tool (name, description, call(args)) or a function, "
        f"got {type(tool).__name__}"
    )


def _protocol_tool(tool: Tool) -> ToolOperator:
    name = _named(tool.name, tool)
    description = tool.description
    if not isinstance(description, str):
        raise BlogeUsageError(f"tool {name!r}: description must be a string, "
                              f"got {type(description).__name__}")
    parameters = getattr(tool, "parameters", None)
    if parameters is None:
        parameters = ANY_OBJECT
    elif not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        raise BlogeUsageError(f"tool {name!r}: parameters must be the JSON schema of an "
                              'object, such as {"type": "object", "properties": {…}}')
    return ToolOperator(name, description, dict(parameters),
                        call_operator(tool.call, _as_json_text))


def _as_json_text(arguments: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (DEFAULT_CODEC.encode(arguments),), {}


def _named(name: object, tool: object) -> str:
    if isinstance(name, str) and TOOL_NAME.fullmatch(name):
        return name
    raise BlogeUsageError(
        f"tool {tool!r} needs a name of 1 to 64 letters, digits, '_' or '-', got {name!r}"
        + ("; use a def, or a Tool with a name" if name == "<lambda>" else "")
    )


Prepare: TypeAlias = Callable[[Mapping[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]
"""How a tool's callable is called with the model's (parsed, checked) arguments."""


def call_operator(target: Callable[..., Any], prepare: Prepare) -> object:
    """An operator that calls ``target(*args, **kwargs)`` with ``prepare(arguments)``:
    awaited on the loop when ``target`` is a coroutine function, else on a worker thread."""
    kind = _AsyncCall if inspect.iscoroutinefunction(target) else _SyncCall
    return kind(target, prepare)


class _Call:
    __slots__ = ("_prepare", "_target")

    def __init__(self, target: Callable[..., Any], prepare: Prepare) -> None:
        self._target = target
        self._prepare = prepare

    def __repr__(self) -> str:
        return f"<tool {getattr(self._target, '__qualname__', self._target)!r}>"


class _SyncCall(_Call):
    __slots__ = ()

    def execute(self, arguments: Mapping[str, Any]) -> Any:
        args, kwargs = self._prepare(arguments)
        return self._target(*args, **kwargs)


class _AsyncCall(_Call):
    __slots__ = ()

    async def execute(self, arguments: Mapping[str, Any]) -> Any:
        args, kwargs = self._prepare(arguments)
        return await self._target(*args, **kwargs)
