"""Handoffs: an agent hands the conversation to another (``handoff billing : agent
billingAgent { description = "…" }``, ``Agent(…, handoffs=[billing])``).

The model sees each handoff as a tool, ``transfer_to_<name>`` (the name OpenAI Agents gives its
handoff tools, which models are used to), with one optional argument, ``reason``. When it calls
one, the run goes on — same run, same thread, same turn count — with the other agent's prompt,
tools, memory strategy, model and budget; the call's tool message tells the model who took
over. The first handoff of a round wins; any other one in the same round is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bloge.agent.named_agents import Where, unknown_agent
from bloge.core.codec import parse_json
from bloge.core.errors import DslError
from bloge.llm.types import HANDOFF_TOOL_PREFIX, ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.definition import AgentDef

#: The prefix of a handoff's tool name.
TOOL_PREFIX = HANDOFF_TOOL_PREFIX

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"reason": {
        "type": "string",
        "description": "Why the conversation goes to this agent, in one sentence."}},
    "required": [],
}


@dataclass(frozen=True, slots=True)
class HandoffDef:
    """One handoff of an agent: ``name`` (the model's tool is ``transfer_to_<name>``), the
    ``agent_id`` that takes over, and a ``description`` telling the model when to hand over.
    ``where`` is where the DSL declared its target, for errors (``None``: Python)."""

    name: str
    agent_id: str
    description: str = ""
    where: Where | None = field(default=None, compare=False)

    @property
    def tool_name(self) -> str:
        return f"{TOOL_PREFIX}{self.name}"

    @property
    def tool_definition(self) -> ToolDefinition:
        """What the model sees."""
        told = f" {self.description}" if self.description else ""
        return ToolDefinition(
            self.tool_name,
            f"Hand the conversation over to the {self.agent_id} agent.{told}",
            _PARAMETERS)


@dataclass(frozen=True, slots=True)
class Handoff:
    """A handoff that happened in turn ``turn``: from agent ``from_agent`` to ``to_agent``
    through the call ``call_id`` of handoff ``name``, for ``reason`` (the model's, may be
    empty)."""

    turn: int
    name: str
    from_agent: str
    to_agent: str
    call_id: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "handoff": self.name, "from_agent": self.from_agent,
                "to_agent": self.to_agent, "call_id": self.call_id, "reason": self.reason}


def handoff_problems(agent_id: str, handoffs: object, tool_names: list[str]) -> list[str]:
    """Why ``handoffs`` are not valid handoffs of agent ``agent_id`` whose tools are
    ``tool_names``: names are identifiers, unique, clear of the tools' names, and no handoff
    goes to the agent itself."""
    if not isinstance(handoffs, tuple) or not all(isinstance(h, HandoffDef) for h in handoffs):
        return ["handoffs must be a tuple of HandoffDef"]
    problems: list[str] = []
    names = [h.name for h in handoffs]
    for handoff in handoffs:
        if not _NAME.fullmatch(handoff.name):
            problems.append(f"handoff name {handoff.name!r} must be an identifier")
        if handoff.agent_id == agent_id:
            problems.append(f"handoff {handoff.name!r} goes to the agent itself")
        if handoff.tool_name in tool_names:
            problems.append(f"handoff {handoff.name!r} is offered as the tool "
                            f"{handoff.tool_name!r}, which is also a tool's name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        problems.append(f"handoff names must be unique, repeated: {', '.join(repeated)}")
    return problems


def tool_name_of(agent_id: str) -> str:
    """A handoff name made of an agent's id: ``"Billing agent"`` → ``billing_agent``."""
    name = re.sub(r"[^0-9A-Za-z_]+", "_", agent_id).strip("_").lower()
    return name if name and not name[0].isdigit() else f"agent_{name}"


def transfer_message(agent_id: str) -> str:
    """The tool message of a handoff that was taken (as OpenAI Agents words it)."""
    return json.dumps({"assistant": agent_id})


def refused_message(taken: str) -> str:
    """The tool message of a second handoff in a round whose first one, ``taken``, won."""
    return f"Error: not taken: this round already hands the conversation over ({taken})."


def reason_of(arguments: str) -> str:
    """The ``reason`` argument of a handoff call, or ``""`` (arguments are the model's: any
    text may come)."""
    try:
        parsed = parse_json(arguments or "{}")
    except ValueError:
        return ""
    reason = parsed.get("reason") if isinstance(parsed, dict) else None
    return reason if isinstance(reason, str) else ""


def check_targets(definitions: Iterable[AgentDef], known: Collection[str], *,
                  unknown: str = "which no DSL file declares") -> None:
    """Raise a :class:`~bloge.core.errors.CompileError` (each problem at its handoff's
    ``file:line:column``, with the closest agent id) when a handoff of ``definitions`` goes
    to an agent not in ``known``: the check of a whole project, once all its agents are
    compiled (one file may hand over to an agent of another). ``unknown`` says, after the
    agent's id, where it was looked for."""
    errors: list[DslError] = []
    for definition in definitions:
        for handoff in definition.handoffs:
            if handoff.where is None:
                continue  # a Python handoff names its agent object: it is known
            hint = unknown_agent(handoff.agent_id, known)
            if hint is not None:
                errors.append(handoff.where.error(
                    f"handoff {handoff.name!r} of agent {definition.id!r} goes to agent "
                    f"{handoff.agent_id!r}, {unknown}{hint}"))
    if errors:
        raise DslError.collect(errors)
