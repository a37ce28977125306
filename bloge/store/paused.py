"""Paused runs in the store: what a run writes when its round waits, and what it resumes with.

A round whose calls wait is written with the model's answer that asked for it
(:func:`await_calls`: one ``bloge_pending_calls`` row a call, state ``waiting``), so that no
call that waits is ever taken for one that may have run. When the run stops
(:func:`pause_ops`), it is stored as ``awaiting_approval`` or ``awaiting_tool_results`` with
no worker and no lease: it holds nothing but those rows and its thread. Decisions and posted
results change the rows (:mod:`bloge.store.approvals`); a resume (:func:`resumed_round`) reads
them into the engine's :class:`~bloge.agent.runtime.PendingRound` and marks approved calls
``sent`` before any runs, so that an approved call whose run crashes mid-flight follows the
ledger's rule: it is never sent again unless its operator is idempotent. A call that expires
unanswered counts as denied (an approval) or gets an error result saying no result came (an
external call), and the run goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bloge.agent.runtime import (
    Decision,
    PendingCall,
    PendingRound,
    RecordedResult,
    RunPaused,
    call_hash,
    unanswered,
)
from bloge.llm import ToolDefinition
from bloge.store import ops
from bloge.store.records import PendingApproval, RunStatus
from bloge.store.sql import pending

if TYPE_CHECKING:
    from bloge.store.recorder import Recorder
    from bloge.store.store import Store

#: The reason an expired request gives the model.
EXPIRED = "the approval request expired before anyone decided it"
#: The reason an approved call whose tool or arguments are no longer those approved gives.
CHANGED = "the call is not the one approved: its tool or arguments changed since"


def await_calls(store: Store, run_id: str, turn: int,
                calls: Sequence[PendingCall]) -> ops.AwaitCalls:
    """The write of ``calls`` waiting: an approval expires after ``store.approval_expiry``,
    an external call after ``store.tool_results_expiry``."""
    return ops.AwaitCalls(run_id, turn, tuple(stamped(store, call) for call in calls))


def stamped(store: Store, call: PendingCall) -> PendingCall:
    """``call`` with the time it expires, by the store's expiry of its kind."""
    expiry = store.approval_expiry if call.kind == "approval" else store.tool_results_expiry
    if expiry is None or call.expires_at is not None:
        return call
    return replace(call, expires_at=call.requested_at + expiry)


async def as_stored(store: Store, run_id: str, paused: RunPaused) -> tuple[PendingCall, ...]:
    """The calls run ``run_id`` paused on (``paused``'s) with the times their rows keep: when
    each was first asked and when it expires. A sub-agent's call is as its own run's
    pause left it."""
    rows = await store.run_script(pending.pending_calls(run_id, paused.tool_round.turn))
    kept = {row.call_id: row for row in rows}
    calls: list[PendingCall] = []
    for call in paused.pending:
        row = kept.get(call.call_id) if call.run_id is None else None
        calls.append(call if row is None else replace(
            call, requested_at=row.requested_at, expires_at=row.expires_at))
    return tuple(calls)


def expired_kind(kind: str) -> str:
    """The event a waiting call of ``kind`` that expired writes."""
    return "approval_expired" if kind == "approval" else "tool_results_expired"


def pause_ops(recorder: Recorder, paused: RunPaused, turns: int, usage: Any,
              now: float) -> list[ops.Op]:
    """The end of a run that paused: a ``subagent_paused`` event per call waiting on a
    sub-agent's run, an event per waiting call (``approval_required`` or
    ``tool_results_required``; a sub-agent's names its run, ``subagent_run_id``, and has no
    turn of this run's),
    then its status. A resumed round that pauses again announces its calls again (their rows
    keep the first request's times)."""
    for child in paused.children:
        recorder.event("subagent_paused", {**child.to_dict(), "turn": turns})
    for call in paused.pending:
        kind = "approval_required" if call.kind == "approval" else "tool_results_required"
        body = {**stamped(recorder.store, call).to_dict(), "run_id": recorder.run_id}
        if call.run_id:  # a sub-agent's call: its turn is not this run's
            body["subagent_run_id"] = call.run_id
        else:
            body["turn"] = turns
        recorder.event(kind, body)
    return [ops.PauseRun(recorder.run_id, RunStatus(paused.status), turns, usage, now)]


async def resumed_round(store: Store, recorder: Recorder,
                        ledger_round: PendingRound) -> PendingRound:
    """``ledger_round`` (the round as the ledger has it) with the decisions and waiting calls
    of its stored rows; approved and expired calls are marked as handed over before the run
    goes on."""
    rows = await store.run_script(pending.pending_calls(recorder.run_id, ledger_round.turn))
    if not rows:
        return ledger_round
    now = store.clock()
    # What the decisions bind to: each call as the round asks for it now.
    bound = {call.id: call_hash(call.name, call.arguments, call.id)
             for call in ledger_round.response.tool_calls}
    decisions: dict[str, Decision] = {}
    waiting: set[str] = set()
    sent: list[str] = []
    expired: list[PendingApproval] = []
    unanswered_calls: dict[str, RecordedResult] = {}
    for row in rows:
        if row.call_id in ledger_round.results:
            continue
        match row.state:
            case "approved" if bound.get(row.call_id) != row.hash:
                decisions[row.call_id] = Decision(approved=False, reason=CHANGED)
            case "approved" | "denied":
                decisions[row.call_id] = Decision(approved=row.state == "approved",
                                                  reason=row.reason, principal=row.decided_by)
                if row.state == "approved":
                    sent.append(row.call_id)
            case "waiting" | "expired" if row.kind == "external" and (
                    row.state == "expired" or row.expired(now)):
                unanswered_calls[row.call_id] = unanswered(row.tool)
                if row.state == "waiting":
                    expired.append(row)
            case "waiting" if row.expired(now):
                decisions[row.call_id] = Decision(approved=False, reason=EXPIRED)
                expired.append(row)
            case "waiting":
                waiting.add(row.call_id)
            case "expired":
                decisions[row.call_id] = Decision(approved=False, reason=EXPIRED)
            case _:
                pass  # sent: the ledger's rule; answered: its result is in the ledger
    if sent or expired:
        for row in expired:
            recorder.event(expired_kind(row.kind), {"call_id": row.call_id, "tool": row.tool,
                                                    "turn": ledger_round.turn})
        recorder.keep(ops.HandOver(recorder.run_id, ledger_round.turn, tuple(sent),
                                   tuple(row.call_id for row in expired), now))
        await recorder.flush()
    return replace(ledger_round, decisions=decisions, waiting=frozenset(waiting),
                   results={**ledger_round.results, **unanswered_calls})


def tool_json(tool: ToolDefinition) -> dict[str, Any]:
    """A run's own tool as the store keeps it."""
    return {"name": tool.name, "description": tool.description,
            "parameters": dict(tool.parameters)}


def tool_of(data: Any) -> ToolDefinition:
    """A run's own tool from :func:`tool_json`'s data."""
    return ToolDefinition(str(data["name"]), str(data.get("description", "")),
                          data.get("parameters") or {"type": "object"})


def waiting_rows(rows: Sequence[PendingApproval]) -> tuple[PendingApproval, ...]:
    """The rows still waiting, in order."""
    return tuple(row for row in rows if row.state == "waiting")
