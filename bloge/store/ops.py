"""Writes, as values. A recorder gathers them and a backend applies a batch in one
transaction, so that no half-written turn is ever visible."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bloge.agent.runtime import CallUsage, Claim, Spend
from bloge.store.records import RunEvent, RunStatus, Segment, StoredMessage


@dataclass(frozen=True, slots=True)
class AppendMessages:
    """Messages at the end of a thread's log (their numbers were assigned by the thread's
    holder)."""

    thread_id: str
    messages: tuple[StoredMessage, ...]
    at: float


@dataclass(frozen=True, slots=True)
class AppendEvents:
    events: tuple[RunEvent, ...]


@dataclass(frozen=True, slots=True)
class AppendRunEvents:
    """Events at the end of run ``run_id``'s, numbered by the store as they are written
    (their own ``seq`` is ignored): for writers of one run that do not share a counter, such
    as the workers of a Temporal run's activities."""

    run_id: str
    events: tuple[RunEvent, ...]
    at: float


@dataclass(frozen=True, slots=True)
class SaveCheckpoint:
    run_id: str
    turn: int
    view: tuple[Segment, ...]
    usage: Mapping[str, int]
    at: float


@dataclass(frozen=True, slots=True)
class DispatchToolCalls:
    """The tool calls of one turn, recorded before any of them runs."""

    run_id: str
    turn: int
    message_seq: int
    """The number of the assistant message that asked for the calls."""
    calls: tuple[tuple[str, str, str], ...]
    """(call id, tool name, arguments JSON) in the model's order."""
    at: float


@dataclass(frozen=True, slots=True)
class CompleteToolCall:
    run_id: str
    turn: int
    call_id: str
    success: bool
    content: str
    text_result: bool
    at: float


@dataclass(frozen=True, slots=True)
class UpdateRun:
    """A running run's progress: its turn count and usage."""

    run_id: str
    turns: int
    usage: Mapping[str, int]
    at: float


@dataclass(frozen=True, slots=True)
class FinishRun:
    """A run's end; releases its thread and records the memory view the thread's next run
    starts from (``view``)."""

    run_id: str
    thread_id: str
    status: RunStatus
    exit_reason: str
    turns: int
    usage: Mapping[str, int]
    output: Mapping[str, Any] | None
    error: Mapping[str, str] | None
    view: tuple[Segment, ...] | None
    at: float


@dataclass(frozen=True, slots=True)
class AwaitCalls:
    """Calls of turn ``turn`` that wait (for approval, or an external result), written with
    the model's answer that asked for them; ``calls`` are
    :class:`~bloge.agent.PendingCall` values."""

    run_id: str
    turn: int
    calls: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class PauseRun:
    """The run waits (``status``): it holds its thread, but no worker and no lease."""

    run_id: str
    status: RunStatus
    turns: int
    usage: Mapping[str, int]
    at: float


@dataclass(frozen=True, slots=True)
class HandOver:
    """Decided calls of turn ``turn`` given to the run that continues: an approved call is
    ``sent`` from now on (a crash after this never sends it again unless its operator is
    idempotent); an expired one is recorded as such."""

    run_id: str
    turn: int
    sent: tuple[str, ...]
    expired: tuple[str, ...]
    at: float


@dataclass(frozen=True, slots=True)
class ForgetPendingCalls:
    """The calls that waited in the run's rounds after turn ``turn``, forgotten: the run is
    taken up from its checkpoint of that turn and asked those rounds anew (on Temporal), so
    that a call id asked again (``c1``) waits for a decision of its own."""

    run_id: str
    turn: int


@dataclass(frozen=True, slots=True)
class KeepRunTools:
    """A run's own external tools (JSON ToolDefinitions), for its resumes."""

    run_id: str
    tools: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class SettleSpend:
    """A model call settled: ``difference`` (what it spent less what it reserved) added to
    the shared budgets of ``claims``, and its usage row, if any (none: a reservation given
    back)."""

    claims: tuple[Claim, ...]
    difference: Spend
    usage: UsageRow | None
    at: float


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One model call of run ``run_id`` as ``bloge_usage`` keeps it."""

    run_id: str
    thread_id: str | None
    agent_id: str
    principal: str | None
    call: CallUsage


@dataclass(frozen=True, slots=True)
class TraceRun:
    """The trace context a run was started in (a W3C ``traceparent``, then its
    ``tracestate`` after a space): a resumed run's spans continue that trace."""

    run_id: str
    trace_parent: str


@dataclass(frozen=True, slots=True)
class ParentRun:
    """The run that started this one, a sub-agent's run, as a tool call of its own."""

    run_id: str
    parent_run_id: str


@dataclass(frozen=True, slots=True)
class HandOffRun:
    """The run goes on with agent ``agent_id`` (a handoff): its resume does too."""

    run_id: str
    agent_id: str
    at: float


Op = AppendMessages | AppendEvents | AppendRunEvents | SaveCheckpoint | DispatchToolCalls | \
    CompleteToolCall | UpdateRun | FinishRun | AwaitCalls | PauseRun | HandOver | \
    ForgetPendingCalls | KeepRunTools | SettleSpend | TraceRun | ParentRun | HandOffRun
