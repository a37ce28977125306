"""What the store holds, as values: threads, their messages, runs, events, tool calls.

A *thread* is a conversation that outlives a run: an append-only log of messages numbered
from 1. A *run* is one execution of an agent on a thread. A run's *events* (every stream chunk
and listener callback) are numbered from 1 too; a run's turns leave a small checkpoint that
refers to message numbers instead of copying messages, and every tool call is recorded in a
ledger when it is dispatched and when it completes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bloge.agent import AgentUsage
from bloge.llm import LlmMessage


class RunStatus(enum.StrEnum):
    """Where a run is. ``interrupted`` is a run whose worker stopped renewing its lease (it
    died, or was killed): it can be resumed. One that was asked to stop before its worker
    went is ``cancelled`` (and can be resumed too)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_TOOL_RESULTS = "awaiting_tool_results"

    @property
    def paused(self) -> bool:
        """The run waits for decisions or tool results, holding no worker (see
        :class:`~bloge.agent.RunPaused`)."""
        return self in (RunStatus.AWAITING_APPROVAL, RunStatus.AWAITING_TOOL_RESULTS)

    @property
    def finished(self) -> bool:
        return self in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)

    @classmethod
    def ended(cls, exit_reason: str, *, succeeded: bool) -> RunStatus:
        """How a run that ended with ``exit_reason`` is recorded: succeeded when it gave an
        output, cancelled when it was stopped, else failed."""
        if succeeded:
            return cls.SUCCEEDED
        return cls.CANCELLED if exit_reason == "cancelled" else cls.FAILED


#: The key of a thread's ``metadata`` that tags the thread of an eval's case (``bloge eval
#: run`` writes ``{"eval": {"id", "dataset", "case", "repetition"}}``, the only metadata bloge
#: writes): listings leave such threads and their runs out unless asked for them.
EVAL_TAG = "eval"


@dataclass(frozen=True, slots=True)
class Thread:
    """A conversation. ``message_count`` messages are in its log; ``active_run_id`` is the run
    holding it now, if any."""

    id: str
    agent_id: str | None
    created_at: float
    updated_at: float
    metadata: Mapping[str, Any] = field(default_factory=dict)
    message_count: int = 0
    active_run_id: str | None = None
    last_run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (what ``bloge threads show --json`` and ``GET /threads/{id}``
        give, beside the messages)."""
        return {"id": self.id, "agent_id": self.agent_id, "messages": self.message_count,
                "created_at": self.created_at, "updated_at": self.updated_at,
                "metadata": dict(self.metadata), "active_run_id": self.active_run_id,
                "last_run_id": self.last_run_id}


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One message of a thread's log. ``kind`` is ``"message"``, or ``"summary"`` for what a
    ``summary(n)`` memory wrote (seen by the model, not part of any transcript)."""

    thread_id: str
    seq: int
    message: LlmMessage
    run_id: str | None = None
    kind: str = "message"

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "run_id": self.run_id, **self.message.to_dict()}


@dataclass(frozen=True, slots=True)
class RunError:
    """Why a run failed: the error's type and its message (secrets taken out); ``request``,
    when a model's server refused the run's request, is that request (see
    :attr:`bloge.core.errors.ProviderError.request`)."""

    type: str
    message: str
    request: str | None = None
    guardrail: Mapping[str, Any] | None = None
    """The guard that stopped the run (a ``GuardrailTrippedError``): its name, kind, tool,
    and verdict (``tripped``, ``reason``, ``findings``)."""

    def to_dict(self) -> dict[str, Any]:
        described: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.request is not None:
            described["request"] = self.request
        if self.guardrail is not None:
            described["guardrail"] = dict(self.guardrail)
        return described


@dataclass(frozen=True, slots=True)
class Run:
    """One execution of an agent. ``output`` is the ``AgentOutput`` as JSON data once the run
    succeeded; ``error`` says why it failed; ``turns`` counts the turns it used so far."""

    id: str
    thread_id: str
    agent_id: str
    status: RunStatus
    input: tuple[LlmMessage, ...]
    created_at: float
    updated_at: float
    finished_at: float | None = None
    exit_reason: str | None = None
    output: Mapping[str, Any] | None = None
    error: RunError | None = None
    usage: AgentUsage = field(default_factory=AgentUsage)
    turns: int = 0
    worker: str | None = None
    lease_until: float | None = None
    cancel_requested: bool = False
    event_count: int = 0
    pending_approvals: tuple[PendingApproval, ...] = ()
    """The calls a paused run waits on, its own then those of the paused runs it started
    (each names its run; filled by ``Store.get_run``; empty otherwise)."""
    #: The W3C trace context the run was started in (``traceparent``, a space, then
    #: ``tracestate``), when it was started by a traced caller and traced.
    trace_parent: str | None = None
    #: The run whose tool call started this one (a sub-agent's run), else ``None``.
    parent_run_id: str | None = None
    current_agent_id: str | None = None
    """The agent the run goes on with: ``agent_id``'s own, or the one it last handed the
    conversation to (see :mod:`bloge.agent.handoffs`); ``None`` only in a record made by
    hand."""

    @property
    def agent(self) -> str:
        """The agent the run goes on with (``current_agent_id``, else ``agent_id``)."""
        return self.current_agent_id or self.agent_id

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (what ``bloge runs show --json`` and ``GET /runs/{id}`` give)."""
        return {
            "id": self.id, "thread_id": self.thread_id, "agent_id": self.agent_id,
            "current_agent_id": self.agent,
            "status": self.status.value, "exit_reason": self.exit_reason, "turns": self.turns,
            "usage": self.usage.to_dict(), "created_at": self.created_at,
            "updated_at": self.updated_at, "finished_at": self.finished_at,
            "output": None if self.output is None else dict(self.output),
            "error": None if self.error is None else self.error.to_dict(),
            "input": [message.to_dict() for message in self.input],
            "events": self.event_count, "cancel_requested": self.cancel_requested,
            "pending_approvals": [call.to_dict() for call in self.pending_approvals],
            "parent_run_id": self.parent_run_id,
        }

    def summary(self) -> dict[str, Any]:
        """What a parent's record says of this run, its child: id, agent, status and exit
        reason."""
        return {"id": self.id, "agent_id": self.agent_id, "status": self.status.value,
                "exit_reason": self.exit_reason}


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A call of a paused run's round that waited: for a decision (``kind`` ``"approval"``) or
    for its result (``"external"``). ``arguments`` are masked; ``hash`` binds a decision to
    the tool, the arguments and the call; ``requested_by`` is who started the run.
    ``state`` is ``waiting``, ``approved``, ``denied``, ``expired``, ``answered`` (an external
    result posted) or ``sent`` (handed to the run that continued)."""

    run_id: str
    turn: int
    call_id: str
    tool: str
    arguments: str
    kind: str
    hash: str
    requested_by: str | None
    requested_at: float
    expires_at: float | None
    state: str = "waiting"
    reason: str | None = None
    decided_by: str | None = None
    decided_at: float | None = None

    def expired(self, now: float) -> bool:
        """A waiting approval past its expiry (it counts as denied)."""
        return (self.state == "waiting" and self.expires_at is not None
                and self.expires_at <= now)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (``GET /runs/{id}``'s ``pending_approvals``)."""
        return {"run_id": self.run_id, "turn": self.turn, "call_id": self.call_id,
                "tool": self.tool, "arguments": self.arguments, "kind": self.kind,
                "hash": self.hash, "requested_by": self.requested_by,
                "requested_at": self.requested_at, "expires_at": self.expires_at,
                "state": self.state, "reason": self.reason, "decided_by": self.decided_by,
                "decided_at": self.decided_at}


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One numbered event of a run: ``type`` is a listener callback's name
    (``on_agent_tool_completed``) or a stream chunk's (``token``, ``tool_start``, ``tool_end``,
    ``done``); ``body`` holds its fields, as the journal writes them."""

    run_id: str
    seq: int
    type: str
    at: float
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """A tool call in the ledger. ``status`` is ``"dispatched"`` until it completes
    (``"completed"``, with ``success`` and the tool message ``content``). ``text_result``
    says the operator returned text (else ``content`` is its result's JSON)."""

    run_id: str
    turn: int
    call_id: str
    message_seq: int
    """The number of the assistant message that asked for the call."""
    name: str
    arguments: str
    status: str = "dispatched"
    success: bool | None = None
    content: str | None = None
    text_result: bool = False

    @property
    def idempotency_key(self) -> str:
        """``run:turn:call_id``: the same for every attempt of this call, across resumes."""
        return f"{self.run_id}:{self.turn}:{self.call_id}"


Segment = tuple[int, int] | LlmMessage
"""Part of a memory view: a range of message numbers (both ends included) of the thread's
log, or a message held inline (one the memory made itself)."""


def segments(parts: Iterable[int | Segment]) -> tuple[Segment, ...]:
    """A memory view by reference to its thread's log, from its ``parts`` in order: each a
    message's number in the log, a range of numbers, or a message the log does not hold (a
    summary), kept inline. Consecutive numbers join into one range: a window of the last
    twenty messages is one segment however long the thread."""
    joined: list[Segment] = []
    for part in parts:
        segment = (part, part) if isinstance(part, int) else part
        last = joined[-1] if joined else None
        if isinstance(segment, tuple) and isinstance(last, tuple) and last[1] + 1 == segment[0]:
            joined[-1] = (last[0], segment[1])
        else:
            joined.append(segment)
    return tuple(joined)


@dataclass(frozen=True, slots=True)
class TurnCheckpoint:
    """What a run's memory showed the model at the end of ``turn``, by reference, with the
    usage so far. A resumed run rebuilds its memory from it."""

    run_id: str
    turn: int
    view: tuple[Segment, ...]
    usage: AgentUsage
    created_at: float
