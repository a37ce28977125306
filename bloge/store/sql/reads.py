"""Scripts that read the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import orjson

from bloge.store.records import (
    EVAL_TAG,
    Run,
    RunEvent,
    RunStatus,
    StoredMessage,
    Thread,
    ToolCallRecord,
    TurnCheckpoint,
)
from bloge.store.sql.rows import (
    RUN_COLUMNS,
    THREAD_COLUMNS,
    TOOL_CALL_COLUMNS,
    events_of,
    loads,
    message_of,
    run_of,
    thread_of,
    tool_call_of,
    usage_of,
    view_of,
)
from bloge.store.sql.script import Query, Script, one

#: What the metadata of an eval's thread starts with, as it is stored (the JSON of
#: ``{"eval": {…}}``): matched by ``LIKE`` alike in SQLite and PostgreSQL.
EVAL_METADATA = '{"' + EVAL_TAG + '":%'


def get_thread(thread_id: str, *, now: float, owner: str | None = None) -> Script[Thread | None]:
    """The thread; with ``owner``, only if it is that principal's."""
    where, params = _owned("id = ?", (thread_id,), owner)
    row = one((yield Query(f"SELECT {THREAD_COLUMNS} FROM bloge_threads WHERE {where}",
                           params)))
    return None if row is None else thread_of(row, now)


def list_threads(*, limit: int, now: float, owner: str | None = None,
                 containing: str | None = None, evals: bool = True) -> Script[list[Thread]]:
    """The most recently active threads first; with ``owner``, only that principal's; with
    ``containing``, only those whose id or a message holds that text (any case); without
    ``evals``, not those of evals (tagged :data:`EVAL_TAG`)."""
    where, params = _owned("1 = 1", (), owner)
    if not evals:
        where += " AND metadata NOT LIKE ?"
        params = (*params, EVAL_METADATA)
    if containing:
        # A message's body is its JSON: the text is looked for as JSON writes it.
        pattern = "%" + _like_escaped(orjson.dumps(containing.lower()).decode()[1:-1]) + "%"
        where += (" AND (LOWER(id) LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM bloge_messages m"
                  " WHERE m.thread_id = bloge_threads.id AND LOWER(m.body) LIKE ? ESCAPE '\\'))")
        params = (*params, pattern, pattern)
    result = yield Query(f"SELECT {THREAD_COLUMNS} FROM bloge_threads WHERE {where} "
                         "ORDER BY updated_at DESC, id LIMIT ?", (*params, limit))
    return [thread_of(row, now) for row in result.rows]


def _like_escaped(text: str) -> str:
    """``text`` matched literally by ``LIKE … ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def messages(thread_id: str, ranges: Sequence[tuple[int, int]]) -> Script[list[StoredMessage]]:
    """The messages of ``ranges`` (first and last number, both included), in that order."""
    found: list[StoredMessage] = []
    for first, last in ranges:
        result = yield Query("SELECT seq, run_id, kind, body FROM bloge_messages "
                             "WHERE thread_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                             (thread_id, first, last))
        found.extend(message_of(thread_id, row) for row in result.rows)
    return found


def get_run(run_id: str, *, now: float, gone: Sequence[str] = (),
            owner: str | None = None) -> Script[Run | None]:
    """The run; ``gone``: workers known to be dead (see :func:`rows.run_of`); with ``owner``,
    only if it is that principal's."""
    where, params = _owned("id = ?", (run_id,), owner)
    row = one((yield Query(f"SELECT {RUN_COLUMNS} FROM bloge_runs WHERE {where}", params)))
    return None if row is None else run_of(row, now, gone)


def leased_workers(*, now: float) -> Script[list[str]]:
    """The workers that hold a lease now."""
    result = yield Query("SELECT DISTINCT worker FROM bloge_runs WHERE status = ? "
                         "AND lease_until >= ? AND worker IS NOT NULL",
                         (RunStatus.RUNNING.value, now))
    return [str(row[0]) for row in result.rows]


def _owned(where: str, params: tuple[object, ...],
           owner: str | None) -> tuple[str, tuple[object, ...]]:
    """``where``, narrowed to the rows of ``owner`` when one is given (a row of nobody's is
    nobody's to see but an admin's, who gives none)."""
    if owner is None:
        return where, params
    return f"{where} AND owner = ?", (*params, owner)


def list_runs(*, thread_id: str | None, status: RunStatus | None, limit: int,
              now: float, gone: Sequence[str] = (), evals: bool = True) -> Script[list[Run]]:
    """Runs, newest first, of one thread and/or in one status; without ``evals``, not those
    on the threads of evals."""
    where, params = _run_filter(thread_id, status, now, gone, evals=evals)
    result = yield Query(f"SELECT {RUN_COLUMNS} FROM bloge_runs {where} "
                         "ORDER BY created_at DESC, id LIMIT ?", (*params, limit))
    return [run_of(row, now, gone) for row in result.rows]


def child_runs(parent_run_id: str, *, now: float,
               gone: Sequence[str] = ()) -> Script[list[Run]]:
    """The runs ``parent_run_id``'s tool calls started, oldest first."""
    result = yield Query(f"SELECT {RUN_COLUMNS} FROM bloge_runs WHERE parent_run_id = ? "
                         "ORDER BY created_at, id", (parent_run_id,))
    return [run_of(row, now, gone) for row in result.rows]


def _run_filter(thread_id: str | None, status: RunStatus | None, now: float,
                gone: Sequence[str], *, evals: bool) -> tuple[str, tuple[object, ...]]:
    clauses: list[str] = []
    params: list[object] = []
    if thread_id is not None:
        clauses.append("thread_id = ?")
        params.append(thread_id)
    if not evals:
        clauses.append("NOT EXISTS (SELECT 1 FROM bloge_threads t "
                       "WHERE t.id = bloge_runs.thread_id AND t.metadata LIKE ?)")
        params.append(EVAL_METADATA)
    # A run whose lease ended, or whose worker is gone, no longer runs (see rows.run_of).
    dead = f" OR worker IN ({', '.join('?' * len(gone))})" if gone else ""
    ended = f"(lease_until IS NULL OR lease_until < ?{dead})"
    if status is RunStatus.INTERRUPTED:
        clauses.append(f"status = ? AND {ended} AND cancel_requested = 0")
        params.extend((RunStatus.RUNNING.value, now, *gone))
    elif status is RunStatus.CANCELLED:
        # With the runs asked to stop whose worker is gone.
        clauses.append(f"(status = ? OR (status = ? AND {ended} AND cancel_requested <> 0))")
        params.extend((RunStatus.CANCELLED.value, RunStatus.RUNNING.value, now, *gone))
    elif status is RunStatus.RUNNING:
        clauses.append(f"status = ? AND NOT {ended}")
        params.extend((RunStatus.RUNNING.value, now, *gone))
    elif status is not None:
        clauses.append("status = ?")
        params.append(status.value)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


#: Where the ids a prefix may name are, and the column that lists the newest matches first.
_NAMED_BY_PREFIX = {"run": ("bloge_runs", "created_at"), "thread": ("bloge_threads", "updated_at")}


def ids_starting(kind: Literal["run", "thread"], prefix: str, *,
                 limit: int) -> Script[list[str]]:
    """The ids of runs or threads starting with ``prefix``, the newest first. Their starts are
    compared with it as text, not as a ``LIKE`` pattern: ``%`` and ``_`` are themselves, case
    counts on every backend (as in a whole id), and a prefix may be of any length (SQLite
    refuses a pattern of over 50,000 bytes)."""
    table, newest = _NAMED_BY_PREFIX[kind]
    result = yield Query(f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ? "
                         f"ORDER BY {newest} DESC LIMIT ?", (len(prefix), prefix, limit))
    return [row[0] for row in result.rows]


def events(run_id: str, *, after: int, limit: int) -> Script[list[RunEvent]]:
    """Events numbered above ``after``, at most ``limit`` of them (a token row is never cut in
    the middle of the events asked for)."""
    result = yield Query(
        "SELECT seq, last_seq, type, at, body FROM bloge_run_events "
        "WHERE run_id = ? AND last_seq > ? ORDER BY seq LIMIT ?", (run_id, after, limit))
    return list(events_of(run_id, result.rows, after))[:limit]


def latest_checkpoint(run_id: str) -> Script[TurnCheckpoint | None]:
    row = one((yield Query("SELECT turn, view, usage, created_at FROM bloge_checkpoints "
                           "WHERE run_id = ? ORDER BY turn DESC LIMIT 1", (run_id,))))
    if row is None:
        return None
    turn, view, usage, created = row
    return TurnCheckpoint(run_id, int(turn), view_of(view) or (), usage_of(loads(usage)), created)


def tool_calls(run_id: str, turn: int) -> Script[list[ToolCallRecord]]:
    result = yield Query(f"SELECT {TOOL_CALL_COLUMNS} FROM bloge_tool_calls "
                         "WHERE run_id = ? AND turn = ? ORDER BY position", (run_id, turn))
    return [tool_call_of(row) for row in result.rows]


def asked_to_stop(run_ids: Sequence[str]) -> Script[list[str]]:
    """Which of the running runs ``run_ids`` were asked to stop."""
    marks = ", ".join("?" * len(run_ids))
    # Only the placeholders are formatted in; the ids are parameters.
    result = yield Query(f"SELECT id FROM bloge_runs WHERE id IN ({marks}) "
                         "AND status = ? AND cancel_requested <> 0",
                         (*run_ids, RunStatus.RUNNING.value))
    return [row[0] for row in result.rows]
