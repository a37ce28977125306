"""What the workers of this process serve, by task queue: the workflow's way to its agent.

A workflow gets only data from Temporal; the compiled agent (its tool graphs, its registry)
lives in the worker. Each worker files its agents here under its task queue before it
polls, and :class:`~bloge.temporal.workflow.AgentWorkflow` finds them by the task queue it
runs on — the same agents on every replay, since a worker's agents never change while it
runs. This module is passed through the workflow sandbox, so the workflow sees the worker's
entries rather than a fresh copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bloge.agent import (
    AgentDef,
    AgentExecutionListener,
    AgentToolRef,
    Budget,
    BudgetPolicy,
    ConversationMemory,
    with_budget_limits,
)
from bloge.agent.runtime import AgentEngine, ListenerChain
from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.registry import OperatorRegistry
from bloge.temporal.limits import kept_limits, kept_policy
from bloge.temporal.options import ActivityPlan, TemporalOptions, plan_for


@dataclass(frozen=True, slots=True)
class ServedAgent:
    """One agent a worker serves: its definition and registry; the listeners its activities
    notify; the activity options of its calls; and the listener-free engine its workflows
    run (a workflow's code is replayed, so nothing there may notify anyone)."""

    definition: AgentDef
    registry: OperatorRegistry
    listeners: ListenerChain
    plan: ActivityPlan
    codec: JsonCodec = DEFAULT_CODEC
    summarizer: ConversationMemory.Summarizer | None = None
    recorded: bool = False
    """Whether the worker keeps its runs in a run store (the same on every worker of a
    task queue: the workflow's activities depend on it)."""
    budgets: BudgetPolicy | None = None
    """The deployment's budget policy as a workflow keeps it (default run limits, prices,
    answer cap: see :func:`~bloge.temporal.limits.kept_policy`), or ``None`` for none (the
    shipped prices). The same on every worker of a task queue: the workflow decides with
    it."""
    engines: dict[tuple[int, tuple[tuple[str, Any], ...], bool], AgentEngine] = field(
        default_factory=dict)
    activity_tools: tuple[AgentToolRef, ...] = field(init=False)
    """The agent's tools as its tool activities run them: without timeouts of their own,
    since Temporal enforces the activity's (made once, not for each call)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "activity_tools", tuple(
            replace(tool, timeout=None) for tool in self.definition.tools))

    def engine(self, max_turns: int | None = None,
               budget: Mapping[str, Any] | None = None, *,
               policy: bool = False) -> AgentEngine:
        """The workflow's engine, with ``max_turns`` instead of the agent's own if given, and
        its run budget's limits raised (or set) to ``budget``'s (``{"tokens": 80000}``, what
        ``--budget`` gives, see :func:`~bloge.agent.with_budget_limits`); with no ``time``
        limit, which a workflow does not keep (:mod:`bloge.temporal.limits`). With
        ``policy``, budgeted with :attr:`budgets` (its default run limits under the agent's
        own, one by one, and its prices), as a local run is with the settings' policy."""
        turns = self.definition.max_turns if max_turns is None else max_turns
        budgets = self.budgets if policy else None
        key = (turns, tuple(sorted((budget or {}).items())), budgets is not None)
        found = self.engines.get(key)
        if found is None:
            definition = (self.definition if turns == self.definition.max_turns
                          else replace(self.definition, max_turns=turns))
            definition = with_budget_limits(definition, {**(budget or {})})
            if definition.budget is not None:
                kept = Budget.of(kept_limits(definition.budget))
                definition = replace(definition, budget=kept)
            found = self.engines[key] = AgentEngine(
                self.definition.id, definition, self.registry, summarizer=self.summarizer,
                json_codec=self.codec, budgets=budgets)
        return found


def served(definition: AgentDef, registry: OperatorRegistry, options: TemporalOptions, *,
           listeners: Sequence[AgentExecutionListener] = (),
           summarizer: ConversationMemory.Summarizer | None = None,
           budgets: BudgetPolicy | None = None) -> ServedAgent:
    return ServedAgent(definition, registry, ListenerChain(listeners),
                       plan_for(definition, registry, options), summarizer=summarizer,
                       budgets=None if budgets is None else kept_policy(budgets))


# task queue → agent id → (the agent, how many workers of this process filed it)
_QUEUES: dict[str, dict[str, tuple[ServedAgent, int]]] = {}


def file(task_queue: str, agents: Mapping[str, ServedAgent]) -> None:
    """Serve ``agents`` on ``task_queue`` in this process. A second worker of the process
    on the same queue shares the first one's entry for an agent (the one whose workflows
    were already replayed); undo with :func:`withdraw`."""
    entries = _QUEUES.setdefault(task_queue, {})
    for agent_id, agent in agents.items():
        known, count = entries.get(agent_id, (agent, 0))
        entries[agent_id] = (known, count + 1)


def withdraw(task_queue: str, agent_ids: Sequence[str]) -> None:
    entries = _QUEUES.get(task_queue, {})
    for agent_id in agent_ids:
        known = entries.get(agent_id)
        if known is None:
            continue
        agent, count = known
        if count > 1:
            entries[agent_id] = (agent, count - 1)
        else:
            del entries[agent_id]
    if not entries:
        _QUEUES.pop(task_queue, None)


def find(task_queue: str, agent_id: str) -> ServedAgent | None:
    found = _QUEUES.get(task_queue, {}).get(agent_id)
    return None if found is None else found[0]


def known(task_queue: str) -> list[str]:
    return sorted(_QUEUES.get(task_queue, {}))
