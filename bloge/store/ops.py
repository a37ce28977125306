"""Writes, as values. A recorder gathers them and a backend applies a batch in one
transaction, so that no half-written turn is ever visible."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
class TraceRun:
    """The trace context a run was started in (a W3C ``traceparent``, then its
    ``tracestate`` after a space): a resumed run's spans continue that trace."""

    run_id: str
    trace_parent: str


Op = AppendMessages | AppendEvents | AppendRunEvents | SaveCheckpoint | DispatchToolCalls | \
    CompleteToolCall | UpdateRun | FinishRun | TraceRun
