"""``Agent.from_dsl``: an ``agent { … }`` definition whose tool blocks run Python tools."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bloge.agent.agent_calls import AGENT_TOOL_PREFIX, check_agent_calls
from bloge.agent.compiler import AgentDslCompiler
from bloge.agent.definition import AgentDef, AgentToolRef
from bloge.agent.facade.tools import Tool, ToolLike, ToolOperator, tool_operator
from bloge.agent.handoffs import check_targets
from bloge.agent.subagent import SubAgentTool
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry
from bloge.core.suggest import did_you_mean

if TYPE_CHECKING:
    from bloge.agent.loop.base import AgentOperatorBase
from bloge.llm.types import ToolDefinition


def compile_agent(source: str | os.PathLike[str], registry: OperatorRegistry,
                  tools: Sequence[ToolLike], output_types: Sequence[type] = (),
                  agents: Mapping[str, AgentOperatorBase] | None = None) -> AgentDef:
    """The one agent ``source`` (DSL text holding a ``{``, else a file's path) declares,
    compiled against ``registry`` with each of ``tools`` registered under its name; a tool
    block naming no tool is the compiler's error at its ``file:line``, a tool no block names
    a ``BlogeUsageError``. ``output_types`` are the types ``output = <Name>`` may name, by
    their ``__name__``. ``agents`` are the operators of the agents a ``tool x : agent y``
    block may run, or a ``handoff x : agent y`` block hand over to, by agent name (an agent
    named by no block is left alone); a block naming none of them is a located
    :class:`~bloge.core.errors.CompileError`."""
    if isinstance(tools, Tool) or callable(tools):
        raise BlogeUsageError(f"Agent.from_dsl's tools are a list: tools=[{tools!r}]")
    made: dict[str, ToolOperator] = {}
    for tool in tools:
        operator = tool_operator(tool)
        if operator.name in made:
            raise BlogeUsageError(f"two tools named {operator.name!r} given to Agent.from_dsl")
        made[operator.name] = operator
        registry.register(operator.name, operator.operator)
    compiler = AgentDslCompiler(registry, output_types={t.__name__: t for t in output_types})
    if isinstance(source, str) and "{" in source:
        filename = "<string>"
        definition = compiler.compile(source)
    else:
        filename = os.fspath(source)
        definition = compiler.compile_file(Path(source))
    for declared in definition.tools:
        if declared.remote is not None:
            raise BlogeUsageError(
                f"{filename}: tool {declared.name!r} of agent {definition.id!r} asks the A2A "
                f"agent at {declared.remote.url}, which Agent.from_dsl does not wire: run the "
                "agent through the application (bloge run, bloge serve: extra [a2a]), which "
                "makes its operator with the key of its bloge.a2a.remotes entry")
    known = agents or {}
    check_agent_calls({definition.id: definition}, others=known)
    check_targets([definition], known, unknown="which is not among the agents given to "
                                               "Agent.from_dsl")
    for ref, call in {call.operator_ref: call for call in definition.agent_calls}.items():
        registry.register(ref, SubAgentTool(known[call.agent], context=call.context or "fresh",
                                            thread=call.thread or "fresh"))
    used = {tool.operator_ref for tool in definition.tools
            if not tool.external and not tool.operator_ref.startswith(AGENT_TOOL_PREFIX)}
    for name in made:
        if name not in used:
            named = sorted(used)
            suggestions = did_you_mean(name, named)
            hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
            raise BlogeUsageError(
                f"{filename}: agent {definition.id!r} has no tool block running {name!r}, "
                f"the tool given to Agent.from_dsl{hint} (its blocks run: "
                f"{', '.join(named) or 'none'}); add `tool {name} : {name} {{ }}` or leave "
                "the tool out")
    return replace(definition, tools=tuple(
        _described(tool, made[tool.operator_ref]) if tool.operator_ref in made else tool
        for tool in definition.tools))


def _described(tool: AgentToolRef, made: ToolOperator) -> AgentToolRef:
    """``tool`` with the Python tool's description when its block has none, and its schema
    when its block passes the model's arguments whole (no ``input``)."""
    description = tool.description or made.description
    whole = tool.graph.nodes[0].inputs is None
    parameters = dict(made.parameters) if whole else tool.tool_definition.parameters
    if description == tool.description and not whole:
        return tool
    return replace(tool, description=description,
                   tool_definition=ToolDefinition(tool.name, description, parameters))
