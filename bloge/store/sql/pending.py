"""Scripts of the calls paused runs wait on: writing them, deciding them, reading them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bloge.llm import LlmMessage
from bloge.store import ops
from bloge.store.records import PendingApproval, RunStatus
from bloge.store.sql.rows import dumps
from bloge.store.sql.script import Query, Script, one

PENDING_COLUMNS = ("run_id, turn, call_id, tool, arguments, kind, hash, requested_by, "
                   "requested_at, expires_at, state, reason, decided_by, decided_at")


def pending_of(row: Sequence[Any]) -> PendingApproval:
    (run_id, turn, call_id, tool, arguments, kind, hash_, requested_by, requested_at,
     expires_at, state, reason, decided_by, decided_at) = row
    return PendingApproval(run_id, int(turn), call_id, tool, arguments, kind, hash_,
                           requested_by, requested_at, expires_at, state, reason, decided_by,
                           decided_at)


def apply(op: ops.AwaitCalls | ops.PauseRun | ops.HandOver | ops.KeepRunTools) -> Script[None]:
    match op:
        case ops.KeepRunTools(run_id, tools):
            yield Query("UPDATE bloge_runs SET tools = ? WHERE id = ?",
                        (dumps(list(tools)), run_id))
        case ops.AwaitCalls(run_id, turn, calls):
            if not calls:
                return
            yield Query(
                f"INSERT INTO bloge_pending_calls ({PENDING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, "
                "?, (SELECT owner FROM bloge_runs WHERE id = ?), ?, ?, 'waiting', NULL, NULL, "
                "NULL) ON CONFLICT (run_id, turn, call_id) DO NOTHING",
                [(run_id, turn, c.call_id, c.tool, c.arguments, c.kind, c.hash, run_id,
                  c.requested_at, c.expires_at) for c in calls], many=True)
        case ops.PauseRun(run_id, status, turns, usage, at):
            yield Query(
                "UPDATE bloge_runs SET status = ?, turns = ?, usage = ?, updated_at = ?, "
                "worker = NULL, lease_until = NULL WHERE id = ?",
                (status.value, turns, dumps(dict(usage)), at, run_id))
            # The thread stays the run's (no other run may write to it), with no lease.
            yield Query("UPDATE bloge_threads SET lease_until = NULL, updated_at = ? "
                        "WHERE active_run_id = ?", (at, run_id))
        case ops.HandOver(run_id, turn, sent, expired, at):
            if sent:
                yield Query("UPDATE bloge_pending_calls SET state = 'sent' WHERE run_id = ? "
                            "AND turn = ? AND call_id = ? AND state = 'approved'",
                            [(run_id, turn, call_id) for call_id in sent], many=True)
            if expired:
                yield Query("UPDATE bloge_pending_calls SET state = 'expired', decided_at = ? "
                            "WHERE run_id = ? AND turn = ? AND call_id = ? AND state = 'waiting'",
                            [(at, run_id, turn, call_id) for call_id in expired], many=True)


def run_tools(run_id: str) -> Script[list[Any]]:
    """The run's own external tools, as JSON (none: ``[]``)."""
    from bloge.store.sql.rows import loads  # noqa: PLC0415 -- beside dumps, used once

    row = one((yield Query("SELECT tools FROM bloge_runs WHERE id = ?", (run_id,))))
    return list(loads(row[0]) or []) if row is not None and row[0] else []


def pending_calls(run_id: str, turn: int | None = None) -> Script[list[PendingApproval]]:
    """The calls run ``run_id`` waited on, of ``turn`` (else of every turn), in order."""
    where, params = ("run_id = ?", (run_id,)) if turn is None else \
        ("run_id = ? AND turn = ?", (run_id, turn))
    result = yield Query(f"SELECT {PENDING_COLUMNS} FROM bloge_pending_calls WHERE {where} "
                         "ORDER BY turn, requested_at, call_id", params)
    return [pending_of(row) for row in result.rows]


def posted_results(run_id: str, turn: int) -> Script[dict[str, tuple[str, bool]]]:
    """The results posted for the external calls of ``run_id``'s round ``turn``: call id →
    (the tool message, whether it is text rather than JSON)."""
    result = yield Query("SELECT call_id, result, text_result FROM bloge_pending_calls "
                         "WHERE run_id = ? AND turn = ? AND state = 'answered' "
                         "AND result IS NOT NULL", (run_id, turn))
    return {str(call_id): (str(content), bool(text)) for call_id, content, text in result.rows}


#: The ids of a run and of the runs it started, at any depth (its sub-agents'): one parameter,
#: the run's id.
TREE = ("WITH RECURSIVE tree(id) AS (SELECT CAST(? AS TEXT) UNION ALL SELECT c.id FROM "
        "bloge_runs c JOIN tree t ON c.parent_run_id = t.id) SELECT id FROM tree")


def waiting(*, run_id: str | None, owner: str | None,
            limit: int) -> Script[list[PendingApproval]]:
    """Calls that wait now (runs paused), oldest first; of ``run_id``'s run and of the runs
    it started (its sub-agents', at any depth); with ``owner``, only of that principal's
    runs."""
    clauses = ["p.state = 'waiting'", "r.status IN (?, ?)"]
    params: list[Any] = [RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value]
    if run_id is not None:
        clauses.append(f"p.run_id IN ({TREE})")
        params.append(run_id)
    if owner is not None:
        clauses.append("r.owner = ?")
        params.append(owner)
    columns = ", ".join(f"p.{c.strip()}" for c in PENDING_COLUMNS.split(","))
    result = yield Query(
        f"SELECT {columns} FROM bloge_pending_calls p JOIN bloge_runs r ON r.id = p.run_id "
        f"WHERE {' AND '.join(clauses)} ORDER BY p.requested_at, p.call_id LIMIT ?",
        (*params, limit))
    return [pending_of(row) for row in result.rows]


def waiting_below(run_id: str) -> Script[list[PendingApproval]]:
    """Calls that wait now in paused runs ``run_id`` started (its sub-agents', at any
    depth), oldest first."""
    columns = ", ".join(f"p.{c.strip()}" for c in PENDING_COLUMNS.split(","))
    result = yield Query(
        f"SELECT {columns} FROM bloge_pending_calls p JOIN bloge_runs r ON r.id = p.run_id "
        f"WHERE p.state = 'waiting' AND r.status IN (?, ?) AND p.run_id IN ({TREE}) "
        "AND p.run_id <> ? ORDER BY p.requested_at, p.call_id",
        (RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value, run_id,
         run_id))
    return [pending_of(row) for row in result.rows]


def holding(run_id: str, call_ids: Sequence[str], *, owner: str | None) -> Script[list[str]]:
    """The paused runs of ``run_id``'s tree (it and the runs it started, at any depth) whose
    rows hold any of ``call_ids``; ``owner``'s only, when given."""
    marks = ", ".join("?" for _ in call_ids)
    owned = "" if owner is None else " AND r.owner = ?"
    result = yield Query(
        "SELECT DISTINCT p.run_id FROM bloge_pending_calls p JOIN bloge_runs r "
        f"ON r.id = p.run_id WHERE p.call_id IN ({marks}) AND r.status IN (?, ?){owned} "
        f"AND p.turn = r.turns AND p.run_id IN ({TREE})",
        (*call_ids, RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value,
         *(() if owner is None else (owner,)), run_id))
    return [str(row[0]) for row in result.rows]


def paused_callers(run_id: str) -> Script[list[tuple[str, str]]]:
    """(id, status) of the runs above ``run_id`` (its caller's, its caller's caller's…),
    nearest first."""
    result = yield Query(
        "WITH RECURSIVE up(id, parent, status, depth) AS (SELECT id, parent_run_id, status, 0 "
        "FROM bloge_runs WHERE id = ? UNION ALL SELECT r.id, r.parent_run_id, r.status, "
        "u.depth + 1 FROM bloge_runs r JOIN up u ON r.id = u.parent) "
        "SELECT id, status FROM up WHERE depth > 0 ORDER BY depth", (run_id,))
    return [(str(found), str(status)) for found, status in result.rows]


def waiting_counts() -> Script[dict[str, tuple[int, float]]]:
    """Kind → (calls waiting now, when the oldest was requested)."""
    result = yield Query(
        "SELECT p.kind, COUNT(*), MIN(p.requested_at) FROM bloge_pending_calls p "
        "JOIN bloge_runs r ON r.id = p.run_id WHERE p.state = 'waiting' AND r.status IN (?, ?) "
        "GROUP BY p.kind",
        (RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value))
    return {str(kind): (int(count), float(oldest)) for kind, count, oldest in result.rows}


def stalled_rounds(now: float, settled: float,
                   limit: int) -> Script[list[tuple[str, str | None]]]:
    """(run id, owner) of paused runs none of whose calls waits any more (each one decided,
    answered or expired) that nothing else continues: one of their calls expired, or the
    last was answered at or before ``settled``; oldest first."""
    live = ("SELECT 1 FROM bloge_pending_calls w WHERE w.run_id = r.id AND w.turn = r.turns "
            "AND w.state = 'waiting'")
    answered = ("SELECT 1 FROM bloge_pending_calls a WHERE a.run_id = r.id "
                "AND a.turn = r.turns AND a.state <> 'waiting'")
    result = yield Query(
        f"SELECT r.id, r.owner FROM bloge_runs r WHERE r.status IN (?, ?) "
        f"AND (EXISTS ({live} AND w.expires_at <= ?) OR (EXISTS ({answered}) "
        f"AND NOT EXISTS ({answered} AND a.decided_at > ?))) "
        f"AND NOT EXISTS ({live} AND (w.expires_at IS NULL OR w.expires_at > ?)) "
        "ORDER BY r.updated_at LIMIT ?",
        (RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value, now,
         settled, now, limit))
    return [(str(run_id), owner) for run_id, owner in result.rows]


def answer_waits(bounds: Sequence[float], since: float | None,
                 ) -> Script[dict[str, tuple[list[int], int, float, float]]]:
    """Kind → (how many calls answered after ``since`` (``None``: ever) waited at most each
    of ``bounds`` seconds, how many were answered, how long they waited in all, when the
    last was answered): calls decided or whose result was posted, by whatever path."""
    sums = "".join(", SUM(CASE WHEN decided_at - requested_at <= ? THEN 1 ELSE 0 END)"
                   for _ in bounds)
    # Every state but waiting (no decided_at) and expired (not answered) was answered; a
    # condition on decided_at alone lets the planner take its index.
    after = "decided_at IS NOT NULL" if since is None else "decided_at > ?"
    result = yield Query(
        f"SELECT kind, COUNT(*), SUM(decided_at - requested_at), MAX(decided_at){sums} "
        f"FROM bloge_pending_calls WHERE {after} AND state <> 'expired' GROUP BY kind",
        (*bounds, *(() if since is None else (since,))))
    return {str(kind): ([int(n or 0) for n in counts], int(count), float(total or 0.0),
                        float(latest))
            for kind, count, total, latest, *counts in result.rows}


def paused_with(call_ids: Sequence[str], *, owner: str | None,
                input: Sequence[LlmMessage] | None) -> Script[list[str]]:
    """The paused runs whose waiting calls include all of ``call_ids`` (``owner``'s when
    given; whose input is exactly ``input`` when given), newest round first."""
    if not call_ids:
        return []
    marks = ", ".join("?" for _ in call_ids)
    owned = "" if owner is None else " AND r.owner = ?"
    # The input as the run's row holds it (the encoding start_run writes).
    started = "" if input is None else " AND r.input = ?"
    rows = yield Query(
        "SELECT p.run_id FROM bloge_pending_calls p JOIN bloge_runs r ON r.id = p.run_id "
        f"WHERE p.call_id IN ({marks}) AND p.state = 'waiting' AND r.status IN (?, ?)"
        f"{owned}{started} GROUP BY p.run_id HAVING COUNT(*) = ? "
        "ORDER BY MAX(p.requested_at) DESC, p.run_id",
        (*call_ids, RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value,
         *(() if owner is None else (owner,)),
         *(() if input is None else (dumps([m.to_dict() for m in input]),)),
         len(set(call_ids))))
    return [str(row[0]) for row in rows.rows]


class RefusedError(Exception):
    """A decision or a result the run cannot take: ``kind`` is ``"missing"`` (no such run or
    call, or another principal's), ``"conflict"`` (stale, twice, moved on) or
    ``"forbidden"`` (four eyes)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _paused_run(run_id: str, owner: str | None) -> Script[tuple[str, str | None, int]]:
    """(status, owner, turn of the round it waits in) of the paused run ``run_id``. Takes
    the run's row lock first (PostgreSQL; SQLite has one writer): of two decisions on one
    round, the second sees the first, so that exactly one is told none waits any more."""
    yield Query("UPDATE bloge_runs SET updated_at = updated_at WHERE id = ?", (run_id,))
    row = one((yield Query("SELECT status, owner FROM bloge_runs WHERE id = ?", (run_id,))))
    if row is None or (owner is not None and row[1] != owner):
        raise RefusedError("missing", f"no run {run_id!r}")
    status = str(row[0])
    if status not in (RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value):
        raise RefusedError("conflict", f"run {run_id!r} is {status}, not waiting for decisions or "
                                  "tool results: it has moved on")
    turn = one((yield Query("SELECT MAX(turn) FROM bloge_pending_calls WHERE run_id = ?",
                            (run_id,))))
    return status, row[1], int(turn[0]) if turn and turn[0] is not None else 0


def _call(run_id: str, turn: int, call_id: str) -> Script[PendingApproval]:
    row = one((yield Query(f"SELECT {PENDING_COLUMNS} FROM bloge_pending_calls "
                           "WHERE run_id = ? AND turn = ? AND call_id = ?",
                           (run_id, turn, call_id))))
    if row is None:
        raise RefusedError("missing", f"run {run_id!r} waits on no call {call_id!r}")
    return pending_of(row)


def decide(*, run_id: str, call_id: str, approve: bool, reason: str | None,
           principal: str | None, hash: str | None,  # noqa: A002 -- the row's field
           owner: str | None, four_eyes: bool,
           now: float) -> Script[tuple[PendingApproval, int]]:
    """Decide one waiting call; (the call as it was, calls of the round still waiting)."""
    _, started_by, turn = yield from _paused_run(run_id, owner)
    call = yield from _call(run_id, turn, call_id)
    if call.kind != "approval":
        raise RefusedError("conflict", f"call {call_id!r} of run {run_id!r} waits for its result, "
                                  "not a decision: post it to /runs/{id}/tool-results")
    if call.expired(now):
        raise RefusedError("conflict", f"the approval of call {call_id!r} expired; it counts as "
                                  f"denied when run {run_id!r} is resumed")
    if call.state != "waiting":
        by = f" by {call.decided_by}" if call.decided_by else ""
        raise RefusedError("conflict", f"call {call_id!r} of run {run_id!r} was already decided "
                                  f"({call.state}{by})")
    if hash is not None and hash != call.hash:
        raise RefusedError("conflict", f"stale decision: call {call_id!r} has hash {call.hash}, "
                                  f"not {hash}")
    if four_eyes and (principal is None or principal == started_by):
        raise RefusedError("forbidden", f"four eyes: run {run_id!r} was started by "
                                   f"{started_by or 'nobody'}; another principal must decide")
    yield Query("UPDATE bloge_pending_calls SET state = ?, reason = ?, decided_by = ?, "
                "decided_at = ? WHERE run_id = ? AND turn = ? AND call_id = ?",
                ("approved" if approve else "denied", reason, principal, now, run_id, turn,
                 call_id))
    remaining = yield from _still_waiting(run_id, turn, now)
    if remaining:
        yield from _results_only(run_id, now)
    return call, remaining


def post_results(*, run_id: str, results: Sequence[tuple[str, str, bool]],
                 principal: str | None, owner: str | None,
                 now: float) -> Script[tuple[list[PendingApproval], int]]:
    """Post results (call id, tool message, whether text) of waiting external calls; (the
    calls, calls of the round still waiting)."""
    _, _, turn = yield from _paused_run(run_id, owner)
    calls = []
    for call_id, content, text in results:
        call = yield from _call(run_id, turn, call_id)
        if call.kind != "external":
            raise RefusedError("conflict", f"call {call_id!r} of run {run_id!r} waits for a "
                                      "decision, not a result")
        if call.state != "waiting":
            raise RefusedError("conflict", f"call {call_id!r} of run {run_id!r} has its result "
                                      "already")
        if call.expired(now):
            raise RefusedError("conflict", f"call {call_id!r} of run {run_id!r} expired "
                                      "waiting for its result; the run goes on without it "
                                      "(the model is told no result came)")
        calls.append(call)
        yield Query("UPDATE bloge_pending_calls SET state = 'answered', decided_by = ?, "
                    "decided_at = ?, result = ?, text_result = ? "
                    "WHERE run_id = ? AND turn = ? AND call_id = ?",
                    (principal, now, content, int(text), run_id, turn, call_id))
        yield Query("UPDATE bloge_tool_calls SET status = 'completed', success = 1, "
                    "content = ?, text_result = ?, completed_at = ? "
                    "WHERE run_id = ? AND turn = ? AND call_id = ?",
                    (content, int(text), now, run_id, turn, call_id))
    return calls, (yield from _still_waiting(run_id, turn, now))


def _results_only(run_id: str, now: float) -> Script[None]:
    """The run ``run_id`` that waited for decisions, once none waits in its round (nor in
    its paused sub-agents' rounds) and only external calls' results do, is
    ``awaiting_tool_results``: what its client's results alone now continue."""
    yield Query(
        "UPDATE bloge_runs SET status = ? WHERE id = ? AND status = ? AND NOT EXISTS ("
        "SELECT 1 FROM bloge_pending_calls p JOIN bloge_runs c ON c.id = p.run_id "
        f"WHERE p.run_id IN ({TREE}) AND p.turn = c.turns AND c.status IN (?, ?) "
        "AND p.kind = 'approval' AND p.state = 'waiting' "
        "AND (p.expires_at IS NULL OR p.expires_at > ?))",
        (RunStatus.AWAITING_TOOL_RESULTS.value, run_id, RunStatus.AWAITING_APPROVAL.value,
         run_id, RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_TOOL_RESULTS.value,
         now))


def _still_waiting(run_id: str, turn: int, now: float) -> Script[int]:
    row = one((yield Query("SELECT COUNT(*) FROM bloge_pending_calls WHERE run_id = ? AND "
                           "turn = ? AND state = 'waiting' AND (expires_at IS NULL OR "
                           "expires_at > ?)", (run_id, turn, now))))
    return int(row[0]) if row else 0
