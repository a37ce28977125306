"""What a run's spans say beyond the GenAI conventions, read off the same events: approvals,
guard verdicts, budget use, and where a paused run's spans continue.

A run that pauses (its calls wait for a decision, or for posted results) ends its
``invoke_agent`` span there, as ``bloge.exit_reason`` ``paused``. Each time it is resumed
after a pause it is a new *segment*: an ``invoke_agent`` span of its own, child of the span
of the segment before, which the spans of what it does now are children of — one trace, no
span sent twice. The segment, and the decisions taken while the run waited (written by whoever
decided, not by the run), are read from the run's stored events when it resumes
(:func:`continued`), so that a segment resumed again after a crash is the same segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import Event

from bloge.core.tracecontext import span_id_of

#: The events a pausing run announces its waiting calls with, one a call.
WAITING = frozenset({"approval_required", "tool_results_required"})
#: What a call that waited for approval was decided: ``approved``, ``denied``, ``expired``.
APPROVED, DENIED, EXPIRED = "approved", "denied", "expired"
_NANOS = 1_000_000_000


@dataclass(slots=True)
class Continuation:
    """Where a resumed run's spans go on: segment ``segment`` (0: the run's first, the run
    span itself), under ``parent_id`` (the segment before's span; 0: the run's caller), begun
    at ``started_at``; ``decisions``: call id → (decision, principal) of the calls decided
    since the last pause whose spans are not sent yet."""

    segment: int = 0
    parent_id: int = 0
    started_at: float | None = None
    decisions: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def segment_span_id(run_id: str, segment: int) -> int:
    """The span id of segment ``segment`` of run ``run_id`` (0: the run span's)."""
    return span_id_of(run_id) if segment == 0 else span_id_of(run_id, "segment", segment)


def continued(run_id: str, history: Iterable[Any]) -> Continuation:
    """Where the spans of run ``run_id`` go on, from its stored events (``RunEvent``: ``type``,
    ``body``, ``at``, in order)."""
    pauses = 0
    paused_at = 0.0
    after: list[Any] = []  # the events since the last pause
    in_pause = False
    for event in history:
        if event.type in WAITING:
            if not in_pause:
                pauses += 1
                after = []
            in_pause = True
            paused_at = event.at
            continue
        in_pause = False
        after.append(event)
    if not pauses:
        return Continuation()
    decisions: dict[str, tuple[str, str | None]] = {}
    started = paused_at
    for event in after:
        body = event.body
        match event.type:
            case "approval_decided":
                decisions[body["call_id"]] = (APPROVED if body.get("approved") else DENIED,
                                              body.get("principal"))
                started = max(started, event.at)
            case "tool_results_posted":
                started = max(started, event.at)
            case "approval_expired":
                decisions[body["call_id"]] = (EXPIRED, None)
            case "on_agent_tool_completed":  # its span was sent: not again
                decisions.pop(body["tool_call_id"], None)
    return Continuation(pauses, segment_span_id(run_id, pauses - 1), started, decisions)


def approval_attributes(decision: tuple[str, str | None]) -> dict[str, Any]:
    """The attributes of a call that waited for approval: how it was decided, and by whom."""
    verdict, principal = decision
    attributes: dict[str, Any] = {"bloge.approval.decision": verdict}
    if principal:
        attributes["bloge.approval.decided_by"] = principal
    return attributes


def guard_event(body: Mapping[str, Any], at: float, *, capture_content: bool) -> Event:
    """A guard's verdict (an ``on_agent_guard_checked`` event) as a span event ``bloge.guard``;
    its reason only when content is captured (a guard may quote what it checked)."""
    attributes: dict[str, Any] = {"bloge.guard.name": body["guard"],
                                  "bloge.guard.kind": body["kind"],
                                  "bloge.guard.verdict": body["verdict"],
                                  "bloge.turn": body["turn_number"]}
    if body.get("tool_call_id"):
        attributes["gen_ai.tool.call.id"] = body["tool_call_id"]
    if body.get("error_type"):
        attributes["error.type"] = body["error_type"]
    if capture_content and body.get("reason"):
        attributes["bloge.guard.reason"] = body["reason"]
    return Event("bloge.guard", attributes, int(at * _NANOS))


def handoff_event(body: Mapping[str, Any], at: float, *, capture_content: bool) -> Event:
    """A handoff (an ``on_agent_handoff`` event) as a span event ``bloge.handoff``: which
    agent gave the conversation to which, in which turn; the model's reason only when content
    is captured."""
    attributes: dict[str, Any] = {"bloge.handoff.name": body["handoff"],
                                  "bloge.handoff.from_agent": body["from_agent"],
                                  "bloge.handoff.to_agent": body["to_agent"],
                                  "gen_ai.tool.call.id": body["tool_call_id"],
                                  "bloge.turn": body["turn_number"]}
    if capture_content and body.get("reason"):
        attributes["bloge.handoff.reason"] = body["reason"]
    return Event("bloge.handoff", attributes, int(at * _NANOS))


def usage_attributes(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's cost and tool calls (of its ``usage`` document), those it has."""
    if not usage:
        return {}
    attributes: dict[str, Any] = {}
    if usage.get("cost_usd"):
        attributes["bloge.usage.cost_usd"] = float(usage["cost_usd"])
    if usage.get("tool_calls"):
        attributes["bloge.usage.tool_calls"] = int(usage["tool_calls"])
    return attributes


def budget_attributes(budget: Mapping[str, Any] | None) -> dict[str, Any]:
    """The budget a run stopped at (``BudgetExceededError.to_dict()``), as attributes."""
    if not budget:
        return {}
    return {f"bloge.budget.{name}": budget[name]
            for name in ("scope", "limit_name", "limit", "used", "needed", "step")
            if budget.get(name) is not None}


def pause_attributes(waiting: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A paused run's waiting calls ((call id, event kind) each): how many, which, and on what
    the run waits."""
    calls = list(waiting)
    approval = any(kind == "approval_required" for _, kind in calls)
    return {"bloge.pause.status": "awaiting_approval" if approval else "awaiting_tool_results",
            "bloge.pause.waiting_calls": len(calls),
            "bloge.pause.call_ids": tuple(call_id for call_id, _ in calls)}
