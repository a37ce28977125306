"""Deciding the calls of paused runs, posting their results, and finding them.

Every function takes the :class:`~bloge.store.Store` and works in one transaction; a
decision or a result the run cannot take raises :class:`ApprovalConflictError` (stale hash,
decided twice, the run moved on: HTTP 409), :class:`ApprovalForbiddenError` (four eyes: 403)
or :class:`~bloge.store.StoreNotFoundError` (no such run or call, or another principal's:
404). Once no call of the round waits (the return values say how many still do), the run can
be resumed by any worker (``resume_run``), which continues it from the store.

A run whose sub-agent's run paused waits on that run's calls (see
:mod:`bloge.agent.subagent`): they are its calls here too — listed with it, and decided or
answered by its id as well as by their own run's — and :func:`run_to_continue` names the run
to resume once they are answered: the outermost caller that waits, which takes its
sub-agents' runs up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bloge.core.codec import DEFAULT_CODEC
from bloge.llm import LlmMessage
from bloge.store import ops
from bloge.store.call_journal import told
from bloge.store.errors import StoreError, StoreNotFoundError
from bloge.store.records import PendingApproval, RunEvent, RunStatus
from bloge.store.sql import pending, writes
from bloge.store.sql.script import Script
from bloge.store.store import Store

T = TypeVar("T")


class ApprovalConflictError(StoreError):
    """The decision or result cannot be taken: the call was decided already, its hash is
    stale, it expired, or its run has moved on."""


class ApprovalForbiddenError(StoreError):
    """Four eyes: the principal who started the run may not decide its calls."""


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision taken: the call as it waited, and how many calls of its round still wait
    (0: the run can continue)."""

    call: PendingApproval
    approved: bool
    remaining: int


async def decide_call(store: Store, run_id: str, call_id: str, *, approve: bool,
                      reason: str | None = None, principal: str | None = None,
                      hash: str | None = None,  # noqa: A002 -- the field it is compared with
                      owner: str | None = None,
                      four_eyes: bool = False,
                      audit: Callable[[PendingApproval], Script[object]] | None = None,
                      ) -> Decided:
    """Approve or deny one waiting call of the paused run ``run_id``. ``owner``: the run
    must be that principal's (else not found); ``hash``: the decision is for exactly the call
    that hash names; ``four_eyes``: ``principal`` must not be who started the run;
    ``audit(call)``: a script written in the same transaction (the server's audit entry)."""
    now = store.clock()
    run_id = await _holder(store, run_id, [call_id], owner=owner)

    def script() -> Script[tuple[PendingApproval, int, ops.AppendRunEvents]]:
        call, remaining = yield from pending.decide(
            run_id=run_id, call_id=call_id, approve=approve, reason=reason,
            principal=principal, hash=hash, owner=owner, four_eyes=four_eyes, now=now)
        event = _event(run_id, "approval_decided", now, {
            "call_id": call_id, "tool": call.tool, "hash": call.hash, "approved": approve,
            "reason": reason, "principal": principal, "remaining": remaining})
        yield from writes.apply([event])
        if audit is not None:
            yield from audit(call)
        return call, remaining, event

    call, remaining, event = await _run(store, script())
    told(store.call_journal, event.events)
    return Decided(call, approve, remaining)


async def post_tool_results(store: Store, run_id: str, results: Mapping[str, Any], *,
                            principal: str | None = None, owner: str | None = None) -> int:
    """Post the results of waiting external calls (by call id; text as it is, anything else
    as JSON); how many calls of the round still wait."""
    now = store.clock()
    run_id = await _holder(store, run_id, list(results), owner=owner)
    encoded = [(call_id, value, True) if isinstance(value, str)
               else (call_id, DEFAULT_CODEC.encode(value), False)
               for call_id, value in results.items()]

    def script() -> Script[tuple[int, ops.AppendRunEvents]]:
        calls, remaining = yield from pending.post_results(
            run_id=run_id, results=encoded, principal=principal, owner=owner, now=now)
        event = _event(run_id, "tool_results_posted", now, {
            "call_ids": [call.call_id for call in calls], "principal": principal,
            "remaining": remaining})
        yield from writes.apply([event])
        return remaining, event

    remaining, event = await _run(store, script())
    told(store.call_journal, event.events)
    return remaining


async def run_to_continue(store: Store, run_id: str) -> str:
    """The run to resume so that the paused run ``run_id`` goes on: the outermost of the
    paused runs that called it, one inside the other (a caller waits on its sub-agent's
    run, and takes it up when resumed); ``run_id`` itself when its caller does not wait."""
    outermost = run_id
    for caller, status in await store.run_script(pending.paused_callers(run_id)):
        if not RunStatus(status).paused:
            break
        outermost = caller
    return outermost


async def _holder(store: Store, run_id: str, call_ids: Sequence[str], *,
                  owner: str | None) -> str:
    """The run that holds ``call_ids``: ``run_id``, or the one paused run it started (at any
    depth) that waits on them; several is a conflict naming them. None: ``run_id``, whose
    script then says what is wrong."""
    if not call_ids:
        return run_id
    found = await store.run_script(pending.holding(run_id, call_ids, owner=owner))
    if run_id in found or not found:
        return run_id
    if len(found) > 1:
        raise ApprovalConflictError(
            f"calls {', '.join(call_ids)} wait in several runs of run {run_id!r}'s sub-agents "
            f"({', '.join(sorted(found))}); answer them by the run that holds them "
            "(POST /runs/<that run>/approvals/<call_id>)", store=store.url)
    return found[0]


async def posted_results(store: Store, run_id: str, *,
                         turn: int | None = None) -> dict[str, tuple[str, bool]]:
    """The results posted for the external calls the paused run ``run_id`` waits on in its
    round (that of ``turn`` if given: the round whose calls a caller read): call id → (the
    tool message, whether it is text rather than JSON)."""
    if turn is None:
        run = await store.get_run(run_id)
        if not run.status.paused:
            return {}
        turn = run.turns
    return await store.run_script(pending.posted_results(run_id, turn))


async def pending_approvals(store: Store, *, run_id: str | None = None,
                            owner: str | None = None,
                            limit: int = 100) -> list[PendingApproval]:
    """Calls that wait now, oldest first: of ``run_id``'s run and the runs it started (its
    sub-agents', at any depth), of ``owner``'s runs."""
    return await store.run_script(pending.waiting(run_id=run_id, owner=owner, limit=limit))


async def round_calls(store: Store, run_id: str) -> list[PendingApproval]:
    """The calls the paused run ``run_id`` waits on in its round, in every state (waiting,
    decided, answered), in order; none when it is not paused."""
    run = await store.get_run(run_id)
    if not run.status.paused:
        return []
    return await store.run_script(pending.pending_calls(run_id, run.turns))


async def find_paused_runs(store: Store, call_ids: Sequence[str], *, owner: str | None,
                           input: Sequence[LlmMessage] | None = None) -> list[str]:
    """The paused runs (``owner``'s) waiting on every one of ``call_ids``, newest round
    first; with ``input``, only those started with exactly these messages (one query: the
    runs are narrowed in the store, not read)."""
    return await store.run_script(pending.paused_with(list(call_ids), owner=owner,
                                                      input=input))


async def stalled_runs(store: Store, *, settled: float,
                       limit: int = 100) -> list[tuple[str, str | None]]:
    """Paused runs that can go on now but that nothing else continues, oldest first: (run
    id, the principal who started it). Those whose calls are all answered, the last at least
    ``settled`` seconds ago (decided with ``--no-continue``, or whose continuation was
    refused: an answer's own continuation takes its run back at once), and those that can go
    on only because a call expired unanswered (an approval: denied; an external call: no
    result came)."""
    now = store.clock()
    return await store.run_script(pending.stalled_rounds(now, now - settled, limit))


@dataclass(frozen=True, slots=True)
class AnswerWaits:
    """How long the answered calls of one kind waited: ``within[i]`` of them at most
    ``bounds[i]`` seconds; ``count`` in all, ``total`` seconds together; ``latest``: when
    the last of them was answered."""

    bounds: tuple[float, ...]
    within: tuple[int, ...]
    count: int
    total: float
    latest: float

    def plus(self, more: AnswerWaits) -> AnswerWaits:
        """These and ``more`` (of the same bounds) together."""
        return AnswerWaits(self.bounds, tuple(a + b for a, b in zip(self.within, more.within,
                                                                   strict=True)),
                           self.count + more.count, self.total + more.total,
                           max(self.latest, more.latest))


async def answer_waits(store: Store, bounds: Sequence[float], *,
                       since: float | None = None) -> dict[str, AnswerWaits]:
    """How long the calls paused runs waited on took to be answered — decided (an approval)
    or given a result (an external call), over HTTP, from the CLI, from Python or by a
    ``/v1`` client — by kind: of the calls answered after ``since`` (epoch seconds;
    ``None``: every call the store keeps)."""
    found = await store.run_script(pending.answer_waits(bounds, since))
    return {kind: AnswerWaits(tuple(bounds), tuple(within), count, total, latest)
            for kind, (within, count, total, latest) in found.items()}


async def waiting_counts(store: Store) -> dict[str, tuple[int, float]]:
    """Calls waiting now, by kind (``approval``, ``external``): how many, and when the
    oldest was requested (``/metrics``)."""
    return await store.run_script(pending.waiting_counts())


def _event(run_id: str, kind: str, at: float, body: Mapping[str, Any]) -> ops.AppendRunEvents:
    return ops.AppendRunEvents(run_id, (RunEvent(run_id, 0, kind, at, body),), at)


async def _run(store: Store, script: Script[T]) -> T:
    try:
        return await store.run_script(script, write=True)
    except pending.RefusedError as refused:
        kind = {"missing": StoreNotFoundError, "conflict": ApprovalConflictError,
                "forbidden": ApprovalForbiddenError}[refused.kind]
        raise kind(refused.message, store=store.url) from None
