"""Tool calls that wait: for a person's approval, or for a result posted from outside.

A tool may require approval (``requires_approval``: always, or when an expression over its
call holds) or be *external* (no operator: whoever drives the run posts its result). In a
tool round, :func:`plan_round` sorts the model's calls: those that need nothing run at once,
the others wait. When any wait, the engine runs the rest, then stops the run with the
control-flow signal :class:`RunPaused`, which carries the waiting :class:`PendingCall` values,
the checkpoint and the round (``tool_round``; :mod:`.pause`, loaded with the engine, this
module only when a call may wait); the run resumes with a
:class:`~bloge.agent.loop.observer.PendingRound` that holds each call's :class:`Decision` or
posted result. Each call of a parallel batch is decided on its own.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bloge.agent.loop.arguments import ArgumentsError, parse_arguments
from bloge.agent.loop.pause import AWAITING_APPROVAL, AWAITING_TOOL_RESULTS, RunPaused
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.errors import ExpressionError
from bloge.core.masking import mask_credentials
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.types import LlmResponse

if TYPE_CHECKING:
    from bloge.agent.definition import AgentToolRef
    from bloge.agent.loop.checkpoint import AgentCheckpoint
    from bloge.agent.loop.engine import ToolRound
    from bloge.agent.loop.observer import PendingRound, RecordedResult
    from bloge.agent.loop.tools import ToolOutcome
    from bloge.core.context import OperatorContext

CallKind = Literal["approval", "external"]


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision on one call that waits for approval: ``approved`` or not, why, and who
    decided (the principal's name; ``None`` when the run has no principals)."""

    approved: bool
    reason: str | None = None
    principal: str | None = None


@dataclass(frozen=True, slots=True)
class PendingCall:
    """One call of a paused run's round that waits: for a decision (``kind="approval"``) or
    for its result (``"external"``). ``arguments`` is the call's JSON text with credentials
    masked; ``hash`` binds a decision to this tool, these arguments and this call
    (:func:`call_hash`); ``expires_at`` (epoch seconds) is when an unanswered approval counts
    as denied, or an unanswered external call gets an error result (``None``: never).
    ``run_id`` names the run the call waits in when it is not the paused run's own: a
    sub-agent's that the run waits on (``None``: the run's own call)."""

    call_id: str
    tool: str
    arguments: str
    kind: CallKind
    hash: str
    requested_at: float
    expires_at: float | None = None
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"call_id": self.call_id, "tool": self.tool, "arguments": self.arguments,
                "kind": self.kind, "hash": self.hash, "requested_at": self.requested_at,
                "expires_at": self.expires_at, "run_id": self.run_id}


def decision_of(value: Decision | bool) -> Decision:  # noqa: FBT001 -- True/False is a decision
    """``value`` as a :class:`Decision`."""
    if isinstance(value, Decision):
        return value
    if isinstance(value, bool):
        return Decision(approved=value)
    raise TypeError(f"a decision is True, False or a Decision, got {type(value).__name__}")


def posted_result(value: Any) -> RecordedResult:
    """An external call's posted result as the round records it: text as it is, anything else
    as JSON."""
    from bloge.agent.loop.observer import RecordedResult  # noqa: PLC0415 -- a cycle at import

    if isinstance(value, str):
        return RecordedResult(success=True, content=value, text_result=True)
    return RecordedResult(success=True, content=DEFAULT_CODEC.encode_lenient(value),
                          text_result=False)


def call_hash(tool: str, arguments: str, call_id: str) -> str:
    """The hex SHA-256 binding a decision to ``tool``, ``arguments`` (canonical JSON: keys
    sorted, no spaces; the text itself when it is not JSON) and ``call_id``."""
    try:
        canonical = DEFAULT_CODEC.encode(_sorted(parse_arguments(arguments, DEFAULT_CODEC)))
    except ArgumentsError:
        canonical = arguments
    import hashlib  # noqa: PLC0415 -- loading OpenSSL costs every start-up; only a pause needs it

    digest = hashlib.sha256()
    for part in (tool, canonical, call_id):
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def denial(call: ToolCall, decision: Decision) -> RecordedResult:
    """The tool message a denied (or expired) call gives the model."""
    from bloge.agent.loop.observer import RecordedResult  # noqa: PLC0415 -- a cycle at import

    why = f": {decision.reason}" if decision.reason else ""
    return RecordedResult(success=False, text_result=True,
                          content=f"Error: the call of tool {call.name!r} was denied{why}; "
                          "it did not run")


def unanswered(tool: str) -> RecordedResult:
    """The tool message an external call gives the model when no result was posted for it
    before it expired."""
    from bloge.agent.loop.observer import RecordedResult  # noqa: PLC0415 -- a cycle at import

    return RecordedResult(success=False, text_result=True,
                          content=f"Error: no result came for the call of tool {tool!r} before "
                          "it expired; whoever was to run it did not answer, so it may not "
                          "have run")


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """How a round goes: ``fresh`` calls run now for the first time; ``continued`` ones go on
    from ``recorded`` (a result, a denial, or the ledger's rule for a call that may have run);
    ``waiting`` ones wait."""

    fresh: tuple[ToolCall, ...]
    continued: tuple[ToolCall, ...]
    recorded: Mapping[str, RecordedResult]
    waiting: tuple[PendingCall, ...]


def plan_round(calls: Sequence[ToolCall], tools: Mapping[str, AgentToolRef],
               external: Collection[str], ctx: OperatorContext,
               pending: PendingRound | None) -> RoundPlan:
    """Sort a round's ``calls``: a new round (``pending`` ``None``) by each tool's rule
    (``external`` names the run's own external tools); a resumed round by what ``pending``
    holds."""
    now = time.time()
    if pending is None:
        fresh: list[ToolCall] = []
        waiting: list[PendingCall] = []
        for call in calls:
            kind = waits(call, tools.get(call.name), external, ctx)
            if kind is None:
                fresh.append(call)
            else:
                waiting.append(pending_call(call, kind, now))
        return RoundPlan(tuple(fresh), (), {}, tuple(waiting))
    recorded = dict(pending.results)
    fresh, continued, waiting = [], [], []
    for call in calls:
        if call.id in recorded:
            continued.append(call)
        elif (decision := pending.decisions.get(call.id)) is not None \
                and not _external(call.name, tools, external):
            if decision.approved:
                fresh.append(call)
            else:
                recorded[call.id] = denial(call, decision)
                continued.append(call)
        elif call.id in pending.waiting:
            kind = "external" if _external(call.name, tools, external) else "approval"
            waiting.append(pending_call(call, kind, now))
        else:
            continued.append(call)
    return RoundPlan(tuple(fresh), tuple(continued), recorded, tuple(waiting))


def waits(call: ToolCall, tool: AgentToolRef | None, external: Collection[str],
          ctx: OperatorContext) -> CallKind | None:
    """Whether ``call`` waits, and for what; an unknown tool runs (to fail as unknown)."""
    if call.name in external or (tool is not None and tool.external):
        return "external"
    if tool is None or tool.requires_approval is False:
        return None
    if tool.requires_approval is True:
        return "approval"
    try:
        arguments = parse_arguments(call.arguments, DEFAULT_CODEC)
    except ArgumentsError:
        return None  # it fails as invalid arguments without running
    from bloge.agent.loop.tools import ToolScope  # noqa: PLC0415 -- a cycle at import

    try:
        needed = tool.requires_approval.evaluate(ToolScope(arguments, ctx))
    except ExpressionError:
        return "approval"  # a rule that cannot say fails closed
    return "approval" if needed else None


def stopped_round(turn: int, assistant: LlmMessage, tools: Mapping[str, AgentToolRef],
                  external: Collection[str], ctx: OperatorContext) -> PendingRound:
    """The round of turn ``turn`` a run stopped in, known only by its ``assistant`` message
    (a paused run resumed from its checkpoint, without its round): a call that waits by its
    tool's rule has not run, and waits again; the others ran, or may have, before the run
    stopped (the ledger's rule: run again only when idempotent)."""
    from bloge.agent.loop.observer import PendingRound  # noqa: PLC0415 -- a cycle at import

    waiting = frozenset(call.id for call in assistant.tool_calls
                        if waits(call, tools.get(call.name), external, ctx) is not None)
    response = LlmResponse(assistant.content, "tool_calls", tool_calls=assistant.tool_calls)
    return PendingRound(turn, response, {}, waiting=waiting)


def _external(name: str, tools: Mapping[str, AgentToolRef], external: Collection[str]) -> bool:
    tool = tools.get(name)
    return name in external or (tool is not None and tool.external)


def pending_call(call: ToolCall, kind: CallKind, now: float) -> PendingCall:
    """The waiting record of ``call``: its arguments masked, its hash over the real ones."""
    return PendingCall(call.id, call.name, mask_credentials(call.arguments), kind,
                       call_hash(call.name, call.arguments, call.id), now)


async def run_round(dispatcher: ToolRound, turn: int, plan: RoundPlan,
                    calls: Sequence[ToolCall]) -> list[ToolOutcome]:
    """Run the calls of ``plan`` that do not wait (approved ones first, never sent before;
    then those continued from the ledger): their outcomes in the model's order."""
    if not plan.continued and not plan.waiting:
        return await dispatcher.run(turn, plan.fresh)
    found: dict[str, ToolOutcome] = {}
    if plan.fresh:
        found.update((o.call.id, o) for o in await dispatcher.run(turn, plan.fresh))
    if plan.continued:
        found.update((o.call.id, o) for o in await dispatcher.run(
            turn, plan.continued, recorded=plan.recorded))
    return [found[call.id] for call in calls if call.id in found]


def paused_run(run_id: str | None, turn: int, response: LlmResponse, plan: RoundPlan | None,
               outcomes: Sequence[ToolOutcome], pending: PendingRound | None,
               checkpoint: AgentCheckpoint, *, thread_id: str | None = None) -> RunPaused:
    """The :class:`RunPaused` of a round whose calls wait (``plan``'s, or calls whose
    sub-agent run paused: their outcomes wait on it): the calls that ran (now, or before a
    resume) are in its round's results; a call waiting on a sub-agent has none, so that a
    resume runs it again (it takes the sub-agent's run up)."""
    from bloge.agent.loop.observer import PendingRound, RecordedResult  # noqa: PLC0415 -- a cycle at import

    results = dict(pending.results) if pending is not None else {}
    results.update((o.call.id, RecordedResult(
        success=o.success, content=o.content, text_result=isinstance(o.result, str)))
        for o in outcomes if o.waits_on is None)
    own = plan.waiting if plan is not None else ()
    children = tuple(o.waits_on for o in outcomes if o.waits_on is not None)
    tool_round = PendingRound(turn, response, results,
                              waiting=frozenset(call.call_id for call in own))
    waiting = (*own, *(call for child in children for call in child.pending))
    status = AWAITING_APPROVAL if any(call.kind == "approval" for call in waiting) \
        else AWAITING_TOOL_RESULTS
    return RunPaused(run_id=run_id, status=status, pending=waiting, checkpoint=checkpoint,
                     tool_round=tool_round, children=children, thread_id=thread_id)
