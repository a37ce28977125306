"""Run failures of an agent: ``AgentRunError``, ``MaxTurnsExceededError``,
``GuardrailTrippedError`` and ``BudgetExceededError``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.core.errors import RunError

if TYPE_CHECKING:
    from bloge.agent.guards.model import GuardVerdict


class AgentRunError(RunError):
    """An agent run failed. ``checkpoint`` lets you resume it; ``__cause__`` is the failure
    (a ``ProviderError``, an ``ExpressionError`` in the exit condition, …). A recorded run
    (an operator with a ``store``) also names its ``run_id`` and ``thread_id``, to resume it
    by with ``resume_run``."""

    def __init__(
        self, message: str, *, agent_id: str, checkpoint: AgentCheckpoint, exit_reason: str
    ) -> None:
        self.agent_id = agent_id
        self.checkpoint = checkpoint
        self.exit_reason = exit_reason
        self.run_id: str | None = None
        self.thread_id: str | None = None
        super().__init__(message)


class MaxTurnsExceededError(AgentRunError):
    """The agent needed another model call after ``max_turns`` turns.

    Catch it at the boundary; resume from ``checkpoint`` with a higher cap to continue.
    """

    def __init__(self, *, agent_id: str, max_turns: int, checkpoint: AgentCheckpoint) -> None:
        self.max_turns = max_turns
        super().__init__(
            f"agent {agent_id!r} needed another model call after max_turns={max_turns} turns; "
            "resume from the error's checkpoint with a higher max_turns to continue",
            agent_id=agent_id,
            checkpoint=checkpoint,
            exit_reason="max_turns",
        )


class GuardrailTrippedError(AgentRunError):
    """A guard of the agent tripped and stopped the run: ``guard`` names it, ``kind`` says
    what it checked (``"input"``, ``"output"``, ``"tool_call"``), ``verdict`` is its
    :class:`~bloge.agent.guards.GuardVerdict` (why; its ``findings``) and ``tool_name`` the
    tool whose call tripped it. ``checkpoint`` holds the run before what tripped it (a
    refused input or answer is not in it); resume from it like from any run failure."""

    def __init__(self, *, agent_id: str, guard: str, kind: str, verdict: GuardVerdict,
                 checkpoint: AgentCheckpoint, tool_name: str | None = None) -> None:
        self.guard = guard
        self.kind = kind
        self.verdict = verdict
        self.tool_name = tool_name
        on = f" on a call of tool {tool_name!r}" if tool_name else ""
        super().__init__(
            f"agent {agent_id!r} was stopped by its {kind} guard {guard!r}{on}: "
            f"{verdict.reason or 'it tripped'}",
            agent_id=agent_id, checkpoint=checkpoint, exit_reason="guardrail",
        )

    def details(self) -> dict[str, Any]:
        """What a run's record and an HTTP error say of the guard."""
        return {"guard": self.guard, "kind": self.kind, "tool": self.tool_name,
                **self.verdict.to_dict()}
class BudgetExceededError(AgentRunError):
    """The run's next step did not fit a budget: limit ``limit_name`` (``"usd"``,
    ``"tokens"``, ``"tool_calls"`` …) of the ``scope``'s budget (``"run"``, ``"caller"`` — the run
    that started a sub-agent's —, ``"thread"`` or
    ``"key"``, an API key's for the period) is ``limit``; ``used`` was spent already and the
    ``step`` (``"model call"``, ``"tool round"``) needed ``needed`` (its worst case). Nothing
    of that step was spent.

    Resume from ``checkpoint`` (or the recorded run) with a higher limit to continue.

    ``sub_agents``: how much of ``used`` the run's sub-agents spent, by sub-agent run
    (``"researcher (run 3f…)"``; the agent alone when the run is not recorded), when they
    spent any of it: the runs the message names.
    """

    def __init__(self, *, agent_id: str, scope: str, limit_name: str, limit: float,
                 used: float, needed: float, step: str, checkpoint: AgentCheckpoint,
                 sub_agents: Mapping[str, float] | None = None) -> None:
        self.scope = scope
        self.limit_name = limit_name
        self.limit = limit
        self.used = used
        self.needed = needed
        self.step = step
        self.sub_agents = dict(sub_agents or {})
        owner = {"run": "the run's", "thread": "the thread's", "key": "the API key's",
                 "caller": "the calling agent's run's"}
        needs = (f"{step} needed {_amount(limit_name, needed)} more" if needed
                 else f"{step} found the limit reached")
        spent = ""
        if self.sub_agents:
            spent = "; its sub-agents spent " + ", ".join(
                f"{_amount(limit_name, amount)} in {who}"
                for who, amount in self.sub_agents.items())
        super().__init__(
            f"agent {agent_id!r} stopped: {owner.get(scope, scope)} {limit_name} budget of "
            f"{_amount(limit_name, limit)} would be exceeded (used "
            f"{_amount(limit_name, used)}{spent}; the next {needs}); resume with a higher "
            "limit",
            agent_id=agent_id, checkpoint=checkpoint, exit_reason="budget",
        )

    def to_dict(self) -> dict[str, object]:
        """The stop as JSON (what ``/v1`` and the run's record say)."""
        stop: dict[str, object] = {"scope": self.scope, "limit_name": self.limit_name,
                                   "limit": self.limit, "used": self.used,
                                   "needed": self.needed, "step": self.step}
        if self.sub_agents:
            stop["sub_agents"] = dict(self.sub_agents)
        return stop


def _amount(measure: str, value: float) -> str:
    if measure == "usd":
        return f"${value:.4f}"
    if measure == "time":
        return f"{value:g} s"
    return f"{value:g}"
