"""The functions the agent extension adds to the expression language: ``tool_call(name)``.

They reach the DSL through the extension SPI, as a third party's would
(:class:`~bloge.dsl.extensions.ExpressionFunctionProvider`); :func:`agent_functions` is the
whole library an agent's expressions compile with, in the DSL and in ``AgentBuilder`` alike.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from bloge.core.fields import read_field
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s
from bloge.dsl.expression import STANDARD_LIBRARY, Function, FunctionError, walk
from bloge.dsl.expression.values import type_name
from bloge.dsl.extensions import discover_extensions, function_library


def tool_call(scope: Mapping[str, Any], name: Any) -> bool:
    """Whether the current turn called the tool ``name``: an exit condition's ``tool_calls``
    hold a call of that name."""
    calls = scope.get("tool_calls")
    if not calls:
        return False
    if not isinstance(name, str):
        raise FunctionError(f"tool_call() needs a string, got {type_name(name)}")
    for call in calls:
        called = call.get("name") if type(call) is dict else read_field(call, "name")
        if called == name:
            return True
    return False


def named_tool_calls(node: s.Expr) -> Iterator[s.Literal]:
    """The literal names of every ``tool_call("<name>")`` in ``node`` (a computed name, as
    in ``tool_call(finish_reason + "Tool")``, cannot be checked before the run)."""
    for call in walk(node):
        if (isinstance(call, s.Call) and call.function == "tool_call" and len(call.args) == 1
                and isinstance(call.args[0], s.Literal) and isinstance(call.args[0].value, str)):
            yield call.args[0]


def unknown_tool_problem(name: str, tools: Collection[str]) -> str | None:
    """Why ``tool_call(name)`` can never be true for an agent with ``tools``, or ``None``."""
    if name in tools:
        return None
    hint = did_you_mean_hint(name, tools, otherwise=(
        f" (its tools: {', '.join(sorted(tools))})" if tools else " (it has none)"))
    return f"tool_call({name!r}) names a tool this agent does not have{hint}"


AGENT_FUNCTIONS: Mapping[str, Function] = MappingProxyType({
    "tool_call": Function(tool_call, 1, 1, reads_scope=True,
                          doc="whether this turn called the tool of that name"),
})


def agent_functions() -> Mapping[str, Function]:
    """What an agent's expressions may call: the standard library, :data:`AGENT_FUNCTIONS` and
    the functions of every installed DSL extension."""
    return function_library(discover_extensions(), base=_AGENT_LIBRARY)


_AGENT_LIBRARY: Mapping[str, Function] = MappingProxyType({**STANDARD_LIBRARY, **AGENT_FUNCTIONS})
