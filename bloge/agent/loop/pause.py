"""``RunPaused``: the control-flow signal of a run whose tool round waits (for approval, or for
results posted from outside); see :mod:`bloge.agent.loop.approval`. Apart from it, so that
the engine knows the signal without loading the rest, which a run loads only when one of
its calls may wait."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from bloge.core.errors import BlogeError

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision, PendingCall
    from bloge.agent.loop.checkpoint import AgentCheckpoint
    from bloge.agent.loop.observer import PendingRound

PauseStatus = Literal["awaiting_approval", "awaiting_tool_results"]
AWAITING_APPROVAL: PauseStatus = "awaiting_approval"
AWAITING_TOOL_RESULTS: PauseStatus = "awaiting_tool_results"


class RunPaused(BlogeError):  # noqa: N818 -- a control-flow signal, not an error: named for what happened
    """The run stopped in a tool round until ``pending`` calls are decided or answered.

    Not a failure: a recorded run is stored as ``status`` (``"awaiting_approval"``, or
    ``"awaiting_tool_results"`` when only external calls wait) and resumes by its
    ``run_id``; an unrecorded one (``run_id`` ``None``) resumes with
    ``RunStart(checkpoint=paused.checkpoint, pending=paused.resumed(decisions=…,
    results=…))``.
    """

    def __init__(self, *, run_id: str | None, status: PauseStatus,
                 pending: tuple[PendingCall, ...], checkpoint: AgentCheckpoint,
                 tool_round: PendingRound) -> None:
        self.run_id = run_id
        self.status = status
        self.pending = pending
        self.checkpoint = checkpoint
        self.tool_round = tool_round
        calls = ", ".join(f"{call.tool} ({call.call_id})" for call in pending)
        where = f"run {run_id!r}" if run_id else "the run"
        super().__init__(f"{where} is {status.replace('_', ' ')}: {calls}")

    def resumed(self, *, decisions: Mapping[str, Decision | bool] | None = None,
                results: Mapping[str, Any] | None = None) -> PendingRound:
        """The round to resume an unrecorded run with: ``decisions`` by call id (``True``,
        ``False`` or a :class:`Decision`), ``results`` of external calls by call id."""
        from bloge.agent.loop.approval import decision_of, posted_result  # noqa: PLC0415 -- loaded when a call may wait

        decided = {call_id: decision_of(value) for call_id, value in (decisions or {}).items()}
        answered = {call_id: posted_result(value) for call_id, value in (results or {}).items()}
        waiting = frozenset(call.call_id for call in self.pending) - decided.keys() \
            - answered.keys()
        return replace(self.tool_round, results={**self.tool_round.results, **answered},
                       decisions=decided, waiting=waiting)
