"""Tools that run other agents, as the DSL declares them: ``tool research : agent researcher
{ … }``. Each is an :class:`AgentCall` of its agent's definition; :func:`check_agent_calls`
checks them against the agents a loader knows — a name no agent has, agents that call each
other in a cycle — as compile errors at the name in the tool block. What runs them is
:mod:`bloge.agent.subagent`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bloge.agent.caller_context import SubAgentContext
from bloge.agent.caller_thread import SubAgentThread
from bloge.agent.named_agents import Where, unknown_agent
from bloge.core.errors import DslError

if TYPE_CHECKING:
    from bloge.agent.definition import AgentDef

#: The operator refs of tools that run another agent: ``agent:<agent id>``.
AGENT_TOOL_PREFIX = "agent:"


@dataclass(frozen=True, slots=True)
class AgentCall:
    """A tool block that runs another agent (``tool research : agent researcher { … }``):
    the tool, the agent it names, and ``where`` the name is written, for the errors about
    it. ``context`` is what the block's ``context = "…"`` says the child starts from
    (``None``: the application's ``bloge.agents.sub-agent-context``), ``thread`` which thread
    its ``thread = "…"`` says the child is recorded on (``None``: the application's
    ``bloge.agents.sub-agent-thread``)."""

    tool: str
    agent: str
    where: Where
    context: SubAgentContext | None = None
    thread: SubAgentThread | None = None

    @property
    def operator_ref(self) -> str:
        """The ref of the operator that runs the call: see :func:`agent_tool_ref`."""
        return agent_tool_ref(self.agent, self.context, self.thread)


def agent_tool_ref(agent: str, context: SubAgentContext | None = None,
                   thread: SubAgentThread | None = None) -> str:
    """The operator ref of the tools that run ``agent``: ``agent:<id>``, then ``:<context>``
    for those whose block sets its context, then ``:thread-<thread>`` for those whose block
    sets its thread."""
    ref = f"{AGENT_TOOL_PREFIX}{agent}"
    if context is not None:
        ref = f"{ref}:{context}"
    return ref if thread is None else f"{ref}:thread-{thread}"


#: The arguments of a tool that runs an agent, when its DSL block has no ``input`` block.
QUESTION_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string",
                             "description": "What to ask the agent, in full"}},
    "required": ["input"],
}


def check_agent_calls(definitions: Mapping[str, AgentDef], *,
                      others: Collection[str] = (),
                      unknown: str = "which is not declared") -> None:
    """Check the agent calls of ``definitions`` (by agent id): each names one of them, or one
    of ``others`` (agents known without a definition here), and no agent reaches itself
    through them (``a → b → a``). The problems are a located :class:`CompileError`, the first
    one's, carrying them all (``errors``, see :meth:`DslError.collect`); ``unknown`` says,
    after the id of an agent none of them is, where it was looked for."""
    known = {*definitions, *others}
    listed = ", ".join(sorted(known)) or "none"
    errors: list[DslError] = []
    for definition in definitions.values():
        for call in definition.agent_calls:
            hint = unknown_agent(call.agent, known)
            if hint is not None:
                errors.append(call.where.error(
                    f"tool {call.tool!r} runs agent {call.agent!r}, {unknown}{hint} "
                    f"(agents: {listed})"))
    done: set[str] = set()
    for agent_id in definitions:
        _visit(agent_id, definitions, (), done, errors)
    if errors:
        raise DslError.collect(errors)


def _visit(agent_id: str, definitions: Mapping[str, AgentDef], path: tuple[str, ...],
           done: set[str], errors: list[DslError]) -> None:
    """Depth first from ``agent_id``, reached by ``path``: a call back into ``path`` is a
    cycle, added to ``errors`` at the call that closes it."""
    if agent_id in done:
        return
    definition = definitions.get(agent_id)
    if definition is not None:
        for call in definition.agent_calls:
            if call.agent in path or call.agent == agent_id:
                loop = path[path.index(call.agent):] if call.agent in path else ()
                cycle = [*loop, agent_id, call.agent]
                errors.append(call.where.error(
                    f"agents call each other in a cycle: {' → '.join(cycle)}; a sub-agent "
                    "cannot ask an agent that is waiting for it"))
                continue
            _visit(call.agent, definitions, (*path, agent_id), done, errors)
    done.add(agent_id)
