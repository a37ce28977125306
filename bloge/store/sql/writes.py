"""Scripts that change the store: starting, resuming and ending runs, and applying a batch of
:mod:`bloge.store.ops` in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bloge.llm import LlmMessage
from bloge.store import ops
from bloge.store.records import RunStatus, Segment
from bloge.store.sql import budgets, pending
from bloge.store.sql.rows import MESSAGE_COUNT, dumps, event_rows, view_json, view_of
from bloge.store.sql.script import Query, Script, one


@dataclass(frozen=True, slots=True)
class Claim:
    """A thread held by a run: where its log ends, and the memory view its last finished run
    left (``None`` before any)."""

    thread_id: str
    next_seq: int
    view: tuple[Segment, ...] | None


@dataclass(frozen=True, slots=True)
class Busy:
    """The thread is held by another run, ``run_id``."""

    run_id: str


@dataclass(frozen=True, slots=True)
class Takeover:
    """Take the thread from run ``run_id`` although its lease holds, provided ``worker`` (a
    process known to be gone) still owns that run."""

    run_id: str
    worker: str


@dataclass(frozen=True, slots=True)
class Foreign:
    """The thread belongs to another principal (or to none)."""


def start_run(*, run_id: str, thread_id: str, agent_id: str, input: Sequence[LlmMessage],
              metadata: Mapping[str, Any] | None, worker: str, lease_until: float,
              now: float, takeover: Takeover | None = None, owner: str | None = None,
              own_thread_only: bool = False) -> Script[Claim | Busy | Foreign]:
    """Create the thread when it is new (``owner``'s), take it for ``run_id``, and insert the
    run (``owner``'s). With ``own_thread_only``, a thread that is not ``owner``'s is
    :class:`Foreign` and nothing is written."""
    yield Query(
        "INSERT INTO bloge_threads (id, agent_id, created_at, updated_at, metadata, owner) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (thread_id, agent_id, now, now, dumps(dict(metadata or {})), owner),
    )
    if own_thread_only:
        row = one((yield Query("SELECT owner FROM bloge_threads WHERE id = ?", (thread_id,))))
        if row is None or row[0] != owner:
            return Foreign()
    claim = yield from _claim(thread_id, run_id, lease_until, now, takeover)
    if isinstance(claim, Busy):
        return claim
    yield _insert_run(run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
                      worker=worker, lease_until=lease_until, now=now, owner=owner)
    return claim


def start_run_on_new_thread(*, run_id: str, thread_id: str, agent_id: str,
                            input: Sequence[LlmMessage], metadata: Mapping[str, Any] | None,
                            worker: str, lease_until: float, now: float,
                            owner: str | None = None) -> Script[Claim]:
    """:func:`start_run` on a thread the run creates (``thread_id`` new, made by the caller):
    the thread is inserted already held by the run, and nothing needs reading — a driver may
    send the script blind (one round trip on PostgreSQL instead of six)."""
    yield Query(
        "INSERT INTO bloge_threads (id, agent_id, created_at, updated_at, metadata, owner, "
        "active_run_id, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (thread_id, agent_id, now, now, dumps(dict(metadata or {})), owner, run_id,
         lease_until),
    )
    yield _insert_run(run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
                      worker=worker, lease_until=lease_until, now=now, owner=owner)
    return Claim(thread_id, 1, None)


def join_run(*, run_id: str, thread_id: str, holder: str, parent_run_id: str, agent_id: str,
             input: Sequence[LlmMessage], worker: str, lease_until: float, now: float,
             owner: str | None = None) -> Script[Busy | None]:
    """Insert run ``run_id``, a child of run ``parent_run_id``, on thread ``thread_id`` under
    the hold of run ``holder`` (the parent, or an ancestor: a sub-agent's run on its caller's
    thread), without taking the thread: :class:`Busy` (naming the thread's holder, ``""`` for
    none) when ``holder`` does not hold it, and nothing is written. The parent is written
    with the run, so that the run is known for a guest from its start."""
    held = yield from _held_by(thread_id, holder)
    if held is not None:
        return held
    yield _insert_run(run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
                      worker=worker, lease_until=lease_until, now=now, owner=owner)
    yield Query("UPDATE bloge_runs SET parent_run_id = ? WHERE id = ?",
                (parent_run_id, run_id))
    return None


def rejoin_run(*, run_id: str, thread_id: str, holder: str, worker: str, lease_until: float,
               now: float, previous_worker: str | None = None) -> Script[Busy | None]:
    """Mark run ``run_id`` (stopped) running again under the hold of run ``holder`` on its
    thread, as :func:`join_run` started it, without taking the thread; ``previous_worker``
    as for :func:`resume_run`. :class:`Busy` when ``holder`` does not hold the thread, or
    when another resume took the run first."""
    held = yield from _held_by(thread_id, holder)
    if held is not None:
        return held
    taken = yield from _take_run(run_id, worker=worker, lease_until=lease_until, now=now,
                                 previous_worker=previous_worker)
    return None if taken else Busy(run_id)


def append_guest_messages(*, thread_id: str, run_id: str, holder: str, first: int,
                          messages: Sequence[LlmMessage], now: float,
                          ) -> Script[tuple[int, ...] | Busy]:
    """Append ``messages`` of run ``run_id``, a guest on thread ``thread_id`` under the hold
    of run ``holder`` (a sub-agent's run on its caller's thread), numbering them on insert
    from where the log ends: their numbers, in order; :class:`Busy` (naming the thread's
    holder) when ``holder`` does not hold the thread, and nothing is written.

    For guests that share no counter: the child workflows of a Temporal caller, which run on
    any worker, several at once. The thread's row lock (PostgreSQL; SQLite has one writer)
    makes concurrent guests number in turn, so that no two messages get the same number.
    The holder numbers its own messages itself, and writes none while its guests run (it
    writes the message that asks them first, and numbers again from where the log ends once
    they are done), so its numbers never meet theirs.

    ``first`` is how many messages the run had appended before these (its own count, kept
    where it runs): a retry of an append whose answer was lost finds those of ``messages``
    it wrote already, and gives their numbers back instead of writing them again."""
    held = yield from _held_by(thread_id, holder)
    if held is not None:
        return held
    # Takes the thread's row lock: guests of one thread number their messages in turn.
    yield Query("UPDATE bloge_threads SET updated_at = ? WHERE id = ?", (now, thread_id))
    written = (yield Query(
        "SELECT seq FROM bloge_messages WHERE thread_id = ? AND run_id = ? ORDER BY seq "
        "LIMIT ? OFFSET ?", (thread_id, run_id, len(messages), first))).rows
    seqs = [int(row[0]) for row in written]
    rest = messages[len(seqs):]
    if not rest:
        return tuple(seqs)
    row = one((yield Query("SELECT COALESCE(MAX(seq), 0) FROM bloge_messages "
                           "WHERE thread_id = ?", (thread_id,))))
    base = int(row[0]) if row is not None else 0
    fresh = [base + offset for offset in range(1, len(rest) + 1)]
    yield Query(
        "INSERT INTO bloge_messages (thread_id, seq, run_id, kind, body, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(thread_id, seq, run_id, "message", dumps(message.to_dict()), now)
         for seq, message in zip(fresh, rest, strict=True)], many=True)
    return (*seqs, *fresh)


def _held_by(thread_id: str, holder: str) -> Script[Busy | None]:
    row = one((yield Query("SELECT active_run_id FROM bloge_threads WHERE id = ?",
                           (thread_id,))))
    active = None if row is None else row[0]
    return None if active == holder else Busy(active or "")


def _insert_run(*, run_id: str, thread_id: str, agent_id: str, input: Sequence[LlmMessage],
                worker: str, lease_until: float, now: float, owner: str | None) -> Query:
    return Query(
        "INSERT INTO bloge_runs (id, thread_id, agent_id, status, input, usage, created_at, "
        "updated_at, worker, lease_until, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run_id, thread_id, agent_id, RunStatus.RUNNING.value,
         dumps([m.to_dict() for m in input]), "{}", now, now, worker, lease_until, owner),
    )


def resume_run(*, run_id: str, thread_id: str, worker: str, lease_until: float,
               now: float, previous_worker: str | None = None) -> Script[Claim | Busy]:
    """Take the thread again for a run that stopped, and mark the run running — provided
    ``previous_worker`` (when given) still owns it: of two resuming it at once, one does."""
    claim = yield from _claim(thread_id, run_id, lease_until, now)
    if isinstance(claim, Busy):
        return claim
    taken = yield from _take_run(run_id, worker=worker, lease_until=lease_until, now=now,
                                 previous_worker=previous_worker)
    # The loser's claim above only renewed the lease of the same run, which the winner holds.
    return claim if taken else Busy(run_id)


def _take_run(run_id: str, *, worker: str, lease_until: float, now: float,
              previous_worker: str | None) -> Script[bool]:
    """Mark the stopped run running on ``worker``: whether this took it."""
    # A paused run has no worker to compare: not one another resume has just taken.
    owned = " AND status <> 'running'" if previous_worker is None else " AND worker = ?"
    taken = yield Query(
        "UPDATE bloge_runs SET status = ?, worker = ?, lease_until = ?, updated_at = ?, "
        "finished_at = NULL, exit_reason = NULL, error = NULL, cancel_requested = 0 "
        f"WHERE id = ?{owned}",
        (RunStatus.RUNNING.value, worker, lease_until, now, run_id,
         *(() if previous_worker is None else (previous_worker,))),
    )
    return bool(taken.rowcount == 1)


def _claim(thread_id: str, run_id: str, lease_until: float, now: float,
           takeover: Takeover | None = None) -> Script[Claim | Busy]:
    dead = takeover or Takeover("", "")  # no run has the empty id
    taken = yield Query(
        "UPDATE bloge_threads SET active_run_id = ?, lease_until = ?, updated_at = ? "
        "WHERE id = ? AND (active_run_id IS NULL OR active_run_id = ? OR lease_until < ? "
        "OR (active_run_id = ? AND EXISTS (SELECT 1 FROM bloge_runs r WHERE r.id = ? "
        "AND r.worker = ?)))",
        (run_id, lease_until, now, thread_id, run_id, now, dead.run_id, dead.run_id,
         dead.worker),
    )
    row = one((yield Query(
        f"SELECT {MESSAGE_COUNT} + 1, view, active_run_id FROM bloge_threads WHERE id = ?",
        (thread_id,),
    )))
    assert row is not None  # created above, or by the run being resumed
    if taken.rowcount != 1:
        return Busy(row[2])
    return Claim(thread_id, int(row[0]), view_of(row[1]))


def renew_lease(*, run_id: str, thread_id: str, worker: str,
                lease_until: float) -> Script[bool | None]:
    """Extend the run's lease; whether it was asked to cancel, or ``None`` when the run is no
    longer this worker's (another took it over after the lease ran out)."""
    renewed = yield Query(
        "UPDATE bloge_runs SET lease_until = ? WHERE id = ? AND worker = ? AND status = ?",
        (lease_until, run_id, worker, RunStatus.RUNNING.value),
    )
    if renewed.rowcount != 1:
        return None
    yield Query("UPDATE bloge_threads SET lease_until = ? WHERE id = ? AND active_run_id = ?",
                (lease_until, thread_id, run_id))
    row = one((yield Query("SELECT cancel_requested FROM bloge_runs WHERE id = ?", (run_id,))))
    return bool(row and row[0])


def renew_waiting(*, run_ids: Sequence[str], worker: str,
                  lease_until: float) -> Script[frozenset[str]]:
    """Extend the leases of runs ``run_ids`` that wait on the renewing run (a Temporal child
    workflow's callers), and of the threads they hold; those asked to cancel, and those
    cancelled already (a cancel asked while a run's lease looked ended is written at once,
    while its workflow, still waiting on its child, has yet to stop). A run no longer
    running on ``worker`` is otherwise left as it is."""
    asked: set[str] = set()
    for run_id in run_ids:
        renewed = yield Query(
            "UPDATE bloge_runs SET lease_until = ? WHERE id = ? AND worker = ? AND status = ?",
            (lease_until, run_id, worker, RunStatus.RUNNING.value),
        )
        if renewed.rowcount != 1:
            row = one((yield Query("SELECT status FROM bloge_runs WHERE id = ? AND worker = ?",
                                   (run_id, worker))))
            if row and row[0] == RunStatus.CANCELLED.value:
                asked.add(run_id)
            continue
        yield Query("UPDATE bloge_threads SET lease_until = ? WHERE active_run_id = ? AND id = "
                    "(SELECT thread_id FROM bloge_runs WHERE id = ?)",
                    (lease_until, run_id, run_id))
        row = one((yield Query("SELECT cancel_requested FROM bloge_runs WHERE id = ?",
                               (run_id,))))
        if row and row[0]:
            asked.add(run_id)
    return frozenset(asked)


_PAUSED = (RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value)


def request_cancel(*, run_id: str, now: float) -> Script[str | None]:
    """Ask a running run to stop; a run nobody runs (queued, interrupted, paused) is cancelled
    at once — a paused one with the paused runs it started (its sub-agents', at any depth,
    which it waits on): their answers would go to a run that is over, as a running caller's
    cancel ends its running sub-agents.
    The status the run has now, or ``None`` when there is no such run."""
    row = one((yield Query("SELECT status, lease_until, thread_id FROM bloge_runs WHERE id = ?",
                           (run_id,))))
    if row is None:
        return None
    status, lease, thread_id = row
    if status not in {RunStatus.RUNNING.value, RunStatus.QUEUED.value, *_PAUSED}:
        return str(status)
    if status == RunStatus.RUNNING.value and lease is not None and lease >= now:
        yield Query("UPDATE bloge_runs SET cancel_requested = 1, updated_at = ? WHERE id = ?",
                    (now, run_id))
        return str(status)
    yield from _cancelled_now(run_id, str(thread_id), now)
    if status in _PAUSED:
        children = yield Query(f"SELECT id, thread_id FROM bloge_runs WHERE id IN "
                               f"({pending.TREE}) AND id <> ? AND status IN (?, ?)",
                               (run_id, run_id, *_PAUSED))
        for child_id, child_thread in children.rows:
            yield from _cancelled_now(str(child_id), str(child_thread), now)
    return RunStatus.CANCELLED.value


def _cancelled_now(run_id: str, thread_id: str, now: float) -> Script[None]:
    """Run ``run_id`` is cancelled, its thread free."""
    yield Query("UPDATE bloge_runs SET status = ?, exit_reason = ?, finished_at = ?, "
                "updated_at = ? WHERE id = ?",
                (RunStatus.CANCELLED.value, "cancelled", now, now, run_id))
    yield Query("UPDATE bloge_threads SET active_run_id = NULL, lease_until = NULL "
                "WHERE id = ? AND active_run_id = ?", (thread_id, run_id))


def apply(batch: Sequence[ops.Op]) -> Script[None]:
    """Every write of ``batch``, in order."""
    for op in batch:
        # Most ops are statements made from the op alone: built in one call, not through a
        # generator of their own (a batch is written at each durable point of every turn).
        statements = STATEMENTS.get(type(op))
        if statements is not None:
            for query in statements(op):  # noqa: UP028 -- a list takes no results sent
                yield query
        else:
            yield from _apply(op)


def _apply(op: ops.Op) -> Script[None]:
    """The writes of an op that reads first, or that another module writes."""
    match op:
        case ops.AppendRunEvents(run_id, events, at):
            if not events:
                return
            # Takes the run's row lock (PostgreSQL; SQLite has one writer), so that writers
            # of one run number their events in turn.
            yield Query("UPDATE bloge_runs SET updated_at = ? WHERE id = ?", (at, run_id))
            row = one((yield Query("SELECT COALESCE(MAX(last_seq), 0) FROM bloge_run_events "
                                   "WHERE run_id = ?", (run_id,))))
            base = int(row[0]) if row is not None else 0
            numbered = [replace(event, seq=base + offset)
                        for offset, event in enumerate(events, start=1)]
            yield Query(_INSERT_EVENTS, event_rows(numbered), many=True)
        case ops.AwaitCalls() | ops.PauseRun() | ops.HandOver() | ops.KeepRunTools():
            yield from pending.apply(op)
        case ops.SettleSpend():
            yield from budgets.settled(op)
        case _:
            raise AssertionError(f"no writes for {type(op).__name__}")


_INSERT_EVENTS = ("INSERT INTO bloge_run_events (run_id, seq, last_seq, type, at, body) "
                  "VALUES (?, ?, ?, ?, ?, ?)")


def _append_messages(op: ops.AppendMessages) -> list[Query]:
    if not op.messages:
        return []
    return [Query(
        "INSERT INTO bloge_messages (thread_id, seq, run_id, kind, body, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(op.thread_id, m.seq, m.run_id, m.kind, dumps(m.message.to_dict()), op.at)
         for m in op.messages], many=True)]


def _append_events(op: ops.AppendEvents) -> list[Query]:
    return [Query(_INSERT_EVENTS, event_rows(op.events), many=True)] if op.events else []


def _save_checkpoint(op: ops.SaveCheckpoint) -> list[Query]:
    return [Query(
        "INSERT INTO bloge_checkpoints (run_id, turn, view, usage, created_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, turn) DO UPDATE SET "
        "view = excluded.view, usage = excluded.usage, created_at = excluded.created_at",
        (op.run_id, op.turn, view_json(op.view), dumps(dict(op.usage)), op.at))]


def _dispatch_tool_calls(op: ops.DispatchToolCalls) -> list[Query]:
    return [Query(
        "INSERT INTO bloge_tool_calls (run_id, turn, call_id, position, message_seq, "
        "name, arguments, status, dispatched_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'dispatched', ?) "
        "ON CONFLICT (run_id, turn, call_id) DO NOTHING",
        [(op.run_id, op.turn, call_id, position, op.message_seq, name, arguments, op.at)
         for position, (call_id, name, arguments) in enumerate(op.calls)], many=True)]


def _complete_tool_call(op: ops.CompleteToolCall) -> list[Query]:
    return [Query(
        "UPDATE bloge_tool_calls SET status = 'completed', success = ?, content = ?, "
        "text_result = ?, completed_at = ? WHERE run_id = ? AND turn = ? AND call_id = ?",
        (int(op.success), op.content, int(op.text_result), op.at, op.run_id, op.turn,
         op.call_id))]


def _update_run(op: ops.UpdateRun) -> list[Query]:
    return [Query("UPDATE bloge_runs SET turns = ?, usage = ?, updated_at = ? WHERE id = ?",
                  (op.turns, dumps(dict(op.usage)), op.at, op.run_id))]


def _hand_off_run(op: ops.HandOffRun) -> list[Query]:
    return [Query("UPDATE bloge_runs SET current_agent_id = ?, updated_at = ? WHERE id = ?",
                  (op.agent_id, op.at, op.run_id))]


def _trace_run(op: ops.TraceRun) -> list[Query]:
    return [Query("UPDATE bloge_runs SET trace_parent = ? WHERE id = ?",
                  (op.trace_parent, op.run_id))]


def _parent_run(op: ops.ParentRun) -> list[Query]:
    return [Query("UPDATE bloge_runs SET parent_run_id = ? WHERE id = ?",
                  (op.parent_run_id, op.run_id))]


def _finish(op: ops.FinishRun) -> list[Query]:
    finished = [Query(
        "UPDATE bloge_runs SET status = ?, exit_reason = ?, turns = ?, usage = ?, output = ?, "
        "error = ?, finished_at = ?, updated_at = ?, lease_until = NULL WHERE id = ?",
        (op.status.value, op.exit_reason, op.turns, dumps(dict(op.usage)),
         None if op.output is None else dumps(op.output),
         None if op.error is None else dumps(dict(op.error)), op.at, op.at, op.run_id))]
    if op.view is not None:
        finished.append(Query("UPDATE bloge_threads SET view = ? WHERE id = ?",
                              (view_json(op.view), op.thread_id)))
    finished.append(Query(
        "UPDATE bloge_threads SET active_run_id = NULL, lease_until = NULL, last_run_id = ?, "
        "updated_at = ? WHERE id = ? AND active_run_id = ?",
        (op.run_id, op.at, op.thread_id, op.run_id)))
    return finished


def _forget_pending_calls(op: ops.ForgetPendingCalls) -> list[Query]:
    return [Query("DELETE FROM bloge_pending_calls WHERE run_id = ? AND turn > ?",
                  (op.run_id, op.turn))]


#: The statements of each op made from the op alone (the others: :func:`_apply`).
STATEMENTS: dict[type[Any], Callable[[Any], list[Query]]] = {
    ops.AppendMessages: _append_messages,
    ops.AppendEvents: _append_events,
    ops.SaveCheckpoint: _save_checkpoint,
    ops.DispatchToolCalls: _dispatch_tool_calls,
    ops.CompleteToolCall: _complete_tool_call,
    ops.UpdateRun: _update_run,
    ops.FinishRun: _finish,
    ops.HandOffRun: _hand_off_run,
    ops.TraceRun: _trace_run,
    ops.ParentRun: _parent_run,
    ops.ForgetPendingCalls: _forget_pending_calls,
}


_PRUNED_RUNS = ("(status IN ('succeeded', 'failed', 'cancelled') AND finished_at < ?) OR "
                "(status = 'running' AND lease_until < ? AND updated_at < ?)")
_PRUNED_THREADS = ("updated_at < ? AND active_run_id IS NULL AND NOT EXISTS "
                   "(SELECT 1 FROM bloge_runs r WHERE r.thread_id = bloge_threads.id)")


def prune(*, before: float) -> Script[tuple[int, int]]:
    """Delete runs that ended (or were abandoned) before ``before``, with their events,
    checkpoints and tool calls; then threads untouched since then that no run refers to, and
    the usage and budget counters of that time.
    Returns (runs deleted, threads deleted)."""
    params = (before, before, before)
    for table in ("bloge_run_events", "bloge_checkpoints", "bloge_tool_calls",
                  "bloge_pending_calls"):
        yield Query(f"DELETE FROM {table} WHERE run_id IN "
                    f"(SELECT id FROM bloge_runs WHERE {_PRUNED_RUNS})", params)
    runs = yield Query(f"DELETE FROM bloge_runs WHERE {_PRUNED_RUNS}", params)
    yield Query("DELETE FROM bloge_messages WHERE thread_id IN "
                f"(SELECT id FROM bloge_threads WHERE {_PRUNED_THREADS})", (before,))
    threads = yield Query(f"DELETE FROM bloge_threads WHERE {_PRUNED_THREADS}", (before,))
    yield from budgets.prune(before=before)
    return runs.rowcount, threads.rowcount
