"""A Temporal run whose tool round waits — for approval, or for results posted from
outside — paused in the store, held by no worker.

When the engine stops a recorded run's round with :class:`~bloge.agent.RunPaused` on calls
that wait, the workflow stores the run as ``awaiting_approval`` (or
``awaiting_tool_results``) with its pending calls (:data:`PAUSE_ACTIVITY`, which writes what
a local run that pauses writes, see :mod:`bloge.store.paused`), then waits with
:func:`temporalio.workflow.wait_condition`: no worker holds it, and it survives restarts as
any workflow does. A decision or a result is taken in the store first
(:func:`bloge.store.decide_call`, :func:`bloge.store.post_tool_results`: the audit, the
409s), then sent to the workflow as the :data:`ANSWER_SIGNAL` signal
(``TemporalRunStore.resume_recorded_run``), after new limits for the rest of the run when
the resume gives some (:data:`LIMITS_SIGNAL`: its turns, its budget). A call that expires
unanswered counts as denied (an approval) or gets an error result saying no result came (an
external call): its expiry is a workflow timer. Once every waiting call is answered,
:data:`GO_ON_ACTIVITY` takes the run back in the store and the engine continues the round.

A child workflow (a sub-agent call's run) that pauses pauses its callers in the store too,
in the same transaction, as a local caller whose sub-agent paused is: each is stored as
waiting, its events tell the call that waits (``subagent_paused``) and the child's calls
(each naming the run that holds them), and its record lists them; a decision by a caller's
id decides them in the child's run (:func:`bloge.store.decide_call`), and resuming the
caller sends the child's workflow its answers. When the child goes on, its callers that wait
on nothing else are taken back. Their workflows never stop waiting on the child: only the
store's record of them changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from temporalio import workflow

from bloge.agent import Decision, RunPaused
from bloge.agent.runtime import PendingRound, RecordedResult, ToolOutcome, unanswered
from bloge.core.codec import DEFAULT_CODEC
from bloge.llm.messages import ToolCall
from bloge.temporal.catalogue import ServedAgent
from bloge.temporal.patches import PAUSES, STALE_ANSWERS, STALE_LIMITS, TOOL_RESULTS, patched
from bloge.temporal.wire import Json

PAUSE_ACTIVITY = "bloge.pause"
GO_ON_ACTIVITY = "bloge.go_on"
#: The signal that carries answers by call id: a decision ``{"approved", "reason",
#: "principal"}``, or an external call's posted result ``{"result", "text"}``, each with the
#: ``turn`` of the round it answers (see :class:`Answers`).
ANSWER_SIGNAL = "bloge.answer"
#: The signal that carries new limits for the round that goes on once the answers come
#: (``bloge runs resume --max-turns/--budget``): ``{"max_turns"?, "budget"?, "turn"?}``, sent
#: before the answers that let the run go on, with the ``turn`` of the round it is for (see
#: :class:`Limits`).
LIMITS_SIGNAL = "bloge.limits"
#: The reason an expired request gives the model (as :data:`bloge.store.paused.EXPIRED`).
EXPIRED = "the approval request expired before anyone decided it"


def waits_here(agent: ServedAgent, paused: RunPaused) -> bool:
    """Whether the workflow can wait on ``paused``'s calls: a recorded run's."""
    if not (agent.recorded and patched(PAUSES)):
        return False
    return (all(call.kind == "approval" for call in paused.pending)
            or patched(TOOL_RESULTS))


class Answers:
    """The answers a run's workflow received, by call id, each with the turn whose round it
    answers (``None`` from a client that sent none): a decision, or an external call's
    result. A round takes, of each of its calls, the first answer of its own turn (or of
    none); an answer of another turn is stale (``STALE_ANSWERS``): a resumer that read the
    store before the round went on sent it again, and the call it names is a later round's
    call that took the same id, which no one decided."""

    __slots__ = ("got",)

    def __init__(self) -> None:
        self.got: dict[str, list[tuple[int | None, Decision | RecordedResult]]] = {}

    def take(self, data: Json) -> None:
        for call_id, body in data.items():
            if not isinstance(body, dict):
                continue
            turn = body.get("turn")
            if "result" in body:
                answer: Decision | RecordedResult = RecordedResult(
                    success=True, content=str(body["result"]),
                    text_result=body.get("text") is True)
            else:
                answer = Decision(approved=body.get("approved") is True,
                                  reason=_text(body.get("reason")),
                                  principal=_text(body.get("principal")))
            self.got.setdefault(call_id, []).append(
                (turn if isinstance(turn, int) else None, answer))

    def _answer(self, run_id: str, turn: int, call_id: str) -> Decision | RecordedResult | None:
        """The answer round ``turn`` takes for ``call_id``, if one came; stale ones before it
        are dropped — but taken, as before, by a run whose history was made without
        ``STALE_ANSWERS`` (only a run sent one asks for it)."""
        got = self.got.get(call_id, [])
        while got:
            answered, answer = got[0]
            if not _stale(answered, turn, STALE_ANSWERS):
                return answer
            workflow.logger.warning("run %s: an answer to call %s of turn %s came while turn"
                                    " %s waits; it is dropped", run_id, call_id, answered, turn)
            got.pop(0)
        return None

    async def wait(self, agent: ServedAgent, run_id: str, paused: RunPaused, *,
                   callers: Sequence[Json] = ()) -> PendingRound:
        """Pause the run in the store, wait until each of its calls is decided (or expired),
        take it back: the round to continue. ``callers``: a child workflow's, the runs that
        wait on it (nearest first), paused and taken back with it in the store."""
        waited_by = {"callers": list(callers)} if callers else {}
        turn = paused.tool_round.turn
        checkpoint = paused.checkpoint
        expiries: dict[str, Any] = await workflow.execute_activity(PAUSE_ACTIVITY, {
            "agent": agent.definition.id, "run_id": run_id, "turn": turn,
            "status": paused.status, "calls": [call.to_dict() for call in paused.pending],
            "turns": turn, "usage": checkpoint.usage.to_dict(), **waited_by,
        }, **agent.plan.finish)
        ids = [call.call_id for call in paused.pending]
        tools = {call.call_id: (call.tool, call.kind) for call in paused.pending}
        taken: dict[str, Decision | RecordedResult] = {}
        expired: list[str] = []
        while True:
            for call_id in ids:
                if call_id not in taken and (
                        answer := self._answer(run_id, turn, call_id)) is not None:
                    taken[call_id] = answer
            if not (missing := [call_id for call_id in ids if call_id not in taken]):
                break
            deadlines = [float(expiries[c]) for c in missing if expiries.get(c) is not None]
            timeout = None if not deadlines else min(deadlines) - workflow.time()
            if timeout is None or timeout > 0:
                try:
                    # Until every call has an answer, stale or not (as before stale ones were
                    # told apart: the same timers), or the first expiry.
                    await workflow.wait_condition(
                        lambda: all(c in taken or self.got.get(c) for c in ids),
                        timeout=timeout)
                    continue
                except TimeoutError:
                    pass
            now = workflow.time()
            for call_id in missing:
                if (answer := self._answer(run_id, turn, call_id)) is not None:
                    taken[call_id] = answer
                    continue
                due = expiries.get(call_id)
                if due is not None and float(due) <= now:
                    tool, kind = tools[call_id]
                    taken[call_id] = (Decision(approved=False, reason=EXPIRED)
                                      if kind == "approval" else unanswered(tool))
                    expired.append(call_id)
        for call_id in ids:
            self.got.pop(call_id, None)
        answers = {call_id: taken[call_id] for call_id in ids}
        decisions = {c: a for c, a in answers.items() if isinstance(a, Decision)}
        results = {c: a for c, a in answers.items() if isinstance(a, RecordedResult)}
        await workflow.execute_activity(GO_ON_ACTIVITY, {
            "agent": agent.definition.id, "run_id": run_id, "turn": turn,
            "sent": [c for c in ids if c in decisions and decisions[c].approved],
            "expired": [c for c in expired if c in decisions],
            "unanswered": [c for c in expired if c in results], **waited_by,
        }, **agent.plan.finish)
        resumed = paused.resumed(decisions=decisions)
        return replace(resumed, results={**resumed.results, **results},
                       waiting=frozenset())


def recorded_outcome(call: ToolCall, found: RecordedResult) -> ToolOutcome:
    """A call of a continued round whose result the round holds (it ran before the pause,
    or it was denied): that result, as a local run's dispatcher gives it."""
    result: Any = found.content
    if found.success and not found.text_result:
        try:
            result = DEFAULT_CODEC.decode(found.content)
        except ValueError:
            result = found.content
    return ToolOutcome(call, success=found.success, content=found.content,
                       result=result if found.success else None)


def unknown_outcome(call: ToolCall) -> ToolOutcome:
    """A call of a continued round without a result whose operator is not idempotent: it is
    not sent again (the ledger's rule)."""
    return ToolOutcome(call, success=False, content=(
        f"Error: the outcome of tool {call.name!r} is unknown: the run stopped while it ran, "
        "and it was not run again because its operator is not idempotent; check whether it "
        "took effect before calling it again"))


class Limits:
    """The new limits a run's workflow received (:data:`LIMITS_SIGNAL`), in the order they
    came, each with the turn whose round it is for (``None`` from a client that sent none).
    A round goes on with those of its own turn (or of none); those of another turn are stale
    (``STALE_LIMITS``): a resumer that read the store before the round went on sent them
    again, and they would hold for the rest of the run, though no one gave them to it."""

    __slots__ = ("got",)

    def __init__(self) -> None:
        self.got: list[Json] = []

    def take(self, limits: Json) -> None:
        self.got.append(limits)

    def taken(self, run_id: str, turn: int) -> Json:
        """The limits that came, merged (a budget's limits one by one), for round ``turn``
        to go on with; stale ones are dropped — but taken, as before, by a run whose history
        was made without ``STALE_LIMITS`` (only a run sent some asks for it)."""
        got, self.got = self.got, []
        merged: Json = {}
        for limits in got:
            sent_for = limits.get("turn")
            if _stale(sent_for, turn, STALE_LIMITS):
                workflow.logger.warning("run %s: limits for turn %s came while turn %s"
                                        " waits; they are dropped", run_id, sent_for, turn)
                continue
            given = {key: value for key, value in limits.items() if key != "turn"}
            budget = {**(merged.get("budget") or {}), **(given.get("budget") or {})}
            merged = {**merged, **given, **({"budget": budget} if budget else {})}
        return merged


def _stale(sent_for: object, turn: int, patch: str) -> bool:
    """Whether what a client sent for the round of turn ``sent_for`` is stale for round
    ``turn`` (``sent_for`` not a turn: a client from before turns were sent). ``patch`` is
    asked only then, by a run sent something stale: a history made before it replays taking
    it."""
    return isinstance(sent_for, int) and sent_for != turn and workflow.patched(patch)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


__all__ = ["ANSWER_SIGNAL", "GO_ON_ACTIVITY", "LIMITS_SIGNAL", "PAUSES", "PAUSE_ACTIVITY",
           "TOOL_RESULTS",
           "Answers", "Limits",
           "recorded_outcome", "unknown_outcome", "waits_here"]
