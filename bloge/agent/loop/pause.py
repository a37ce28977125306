"""``RunPaused``: the control-flow signal of a run whose tool round waits (for approval, or for
results posted from outside); see :mod:`bloge.agent.loop.approval`. Apart from it, so that
the engine knows the signal without loading the rest, which a run loads only when one of
its calls may wait.

A call may also wait on a run it started — a sub-agent's (:mod:`bloge.agent.subagent`) —
that paused: the sub-agent's tool raises :class:`SubAgentPaused` with a :class:`ChildWait`,
the round's other calls finish, and the caller pauses too, its ``pending`` holding the
child's waiting calls (each naming the child's run). Resumed, the caller runs that call again,
which takes the child up where it waits: decided, it goes on and answers the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from bloge.core.errors import BlogeError

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision, PendingCall
    from bloge.agent.loop.checkpoint import AgentCheckpoint
    from bloge.agent.loop.observer import PendingRound

PauseStatus = Literal["awaiting_approval", "awaiting_tool_results"]
AWAITING_APPROVAL: PauseStatus = "awaiting_approval"
AWAITING_TOOL_RESULTS: PauseStatus = "awaiting_tool_results"


@dataclass(frozen=True, slots=True)
class ChildWait:
    """A call of a round that waits on the paused run ``run_id`` it started (a sub-agent's):
    that run's ``status``, and the calls it (or a run it started) waits on, each naming its
    run (:attr:`PendingCall.run_id`)."""

    call_id: str
    tool: str
    run_id: str
    status: PauseStatus
    pending: tuple[PendingCall, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the ``subagent_paused`` event's body)."""
        return {"call_id": self.call_id, "tool": self.tool, "run_id": self.run_id,
                "status": self.status}


class SubAgentPaused(BlogeError):  # noqa: N818 -- a control-flow signal, named for what happened
    """A tool call's sub-agent run paused: the call waits on it (``wait``), and so does the
    caller's run once the round's other calls are done. Raised by the sub-agent's tool only
    when both runs are recorded (a paused run is taken up by its id)."""

    def __init__(self, wait: ChildWait) -> None:
        self.wait = wait
        super().__init__(f"sub-agent run {wait.run_id!r} of call {wait.call_id!r} is "
                         f"{wait.status.replace('_', ' ')}")


class RunPaused(BlogeError):  # noqa: N818 -- a control-flow signal, not an error: named for what happened
    """The run stopped in a tool round until ``pending`` calls are decided or answered.

    Not a failure: a recorded run is stored as ``status`` (``"awaiting_approval"``, or
    ``"awaiting_tool_results"`` when only external calls wait) and resumes by its
    ``run_id`` (``thread_id``: the thread it runs on); an unrecorded one (``run_id``
    ``None``) resumes with ``RunStart(checkpoint=paused.checkpoint,
    pending=paused.resumed(decisions=…, results=…))``.

    ``children`` are the round's calls that wait on paused sub-agent runs; their waiting
    calls are in ``pending`` too, each with its run's id (``PendingCall.run_id``): deciding
    one by the caller's run id (``resume_run(run_id, decisions=…)``) decides it in its run.
    """

    def __init__(self, *, run_id: str | None, status: PauseStatus,
                 pending: tuple[PendingCall, ...], checkpoint: AgentCheckpoint,
                 tool_round: PendingRound, children: tuple[ChildWait, ...] = (),
                 thread_id: str | None = None) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.status = status
        self.pending = pending
        self.checkpoint = checkpoint
        self.tool_round = tool_round
        self.children = children
        calls = ", ".join(f"{call.tool} ({call.call_id}"
                          f"{f' in run {call.run_id!r}' if call.run_id else ''})"
                          for call in pending)
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
