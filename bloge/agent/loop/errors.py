"""Run failures of an agent: ``AgentRunError`` and ``MaxTurnsExceededError``."""

from __future__ import annotations

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.core.errors import RunError


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
