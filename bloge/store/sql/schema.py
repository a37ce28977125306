"""The store's schema, versioned, and the script that brings a database up to date.

Version 1 is the first schema; version 2 adds the autopilot's tables; version 3 the owner of
each thread and run (the principal whose API key created it; none for what was recorded before,
or without keys); version 4 the calls paused runs wait on; version 5 the budgets shared by runs
(a thread's, an API key's per period) and the usage of every model call; version 6 the circuit
breakers of fallback models, shared by every worker; version 7 the trace context a run was
started in; version 8 the results posted for external calls; version 9 the run a sub-agent's run
was started by (its parent); version 10 the agent a run goes on with after a handoff. A database
holds its version in ``bloge_schema``; a database newer than this code is refused (an older
bloge must not write a layout it does not know). Every statement is valid for SQLite and for
PostgreSQL alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bloge.store.sql.script import Query, Script, one

#: The schema this code reads and writes.
VERSION = 10

_V1 = (
    """CREATE TABLE bloge_threads (
        id TEXT PRIMARY KEY,
        agent_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        view TEXT,
        active_run_id TEXT,
        lease_until DOUBLE PRECISION,
        last_run_id TEXT)""",
    """CREATE TABLE bloge_messages (
        thread_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        run_id TEXT,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (thread_id, seq))""",
    """CREATE TABLE bloge_runs (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        status TEXT NOT NULL,
        input TEXT NOT NULL,
        output TEXT,
        exit_reason TEXT,
        usage TEXT NOT NULL,
        error TEXT,
        turns BIGINT NOT NULL DEFAULT 0,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        finished_at DOUBLE PRECISION,
        worker TEXT,
        lease_until DOUBLE PRECISION,
        cancel_requested BIGINT NOT NULL DEFAULT 0)""",
    "CREATE INDEX bloge_runs_by_thread ON bloge_runs (thread_id, created_at)",
    "CREATE INDEX bloge_runs_by_time ON bloge_runs (created_at)",
    """CREATE TABLE bloge_run_events (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        last_seq BIGINT NOT NULL,
        type TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (run_id, seq))""",
    """CREATE TABLE bloge_checkpoints (
        run_id TEXT NOT NULL,
        turn BIGINT NOT NULL,
        view TEXT NOT NULL,
        usage TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, turn))""",
    """CREATE TABLE bloge_tool_calls (
        run_id TEXT NOT NULL,
        turn BIGINT NOT NULL,
        call_id TEXT NOT NULL,
        position BIGINT NOT NULL,
        message_seq BIGINT NOT NULL,
        name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        status TEXT NOT NULL,
        success BIGINT,
        content TEXT,
        text_result BIGINT NOT NULL DEFAULT 0,
        dispatched_at DOUBLE PRECISION NOT NULL,
        completed_at DOUBLE PRECISION,
        PRIMARY KEY (run_id, turn, call_id))""",
)

# Version 2: the autopilot's audit chain and its head, knob proposals, knob values.
_V2 = (
    """CREATE TABLE bloge_audit (
        seq BIGINT PRIMARY KEY,
        at DOUBLE PRECISION NOT NULL,
        event TEXT NOT NULL,
        knob TEXT NOT NULL,
        principal TEXT NOT NULL,
        value DOUBLE PRECISION,
        previous DOUBLE PRECISION,
        clamped_from DOUBLE PRECISION,
        proposal_id TEXT,
        reason TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL)""",
    """CREATE TABLE bloge_audit_head (
        id BIGINT PRIMARY KEY, seq BIGINT NOT NULL, hash TEXT NOT NULL)""",
    "INSERT INTO bloge_audit_head (id, seq, hash) VALUES (1, 0, '')",
    """CREATE TABLE bloge_knob_proposals (
        id TEXT PRIMARY KEY,
        knob TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        previous DOUBLE PRECISION NOT NULL,
        proposer TEXT NOT NULL,
        reason TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL,
        clamped_from DOUBLE PRECISION,
        status TEXT NOT NULL,
        decided_by TEXT,
        decided_at DOUBLE PRECISION)""",
    "CREATE INDEX bloge_knob_proposals_by_status ON bloge_knob_proposals (status, created_at)",
    """CREATE TABLE bloge_knob_values (
        name TEXT PRIMARY KEY,
        value DOUBLE PRECISION NOT NULL,
        setting TEXT,
        changed_at DOUBLE PRECISION NOT NULL)""",
)

# Version 3: who owns a thread and a run (NULL: nobody, visible to an admin key only).
_V3 = (
    "ALTER TABLE bloge_threads ADD COLUMN owner TEXT",
    "ALTER TABLE bloge_runs ADD COLUMN owner TEXT",
)

# Version 4: the calls paused runs wait on (approvals, external results), and each run's
# own external tools (JSON ToolDefinitions; NULL: none).
_V4 = (
    """CREATE TABLE bloge_pending_calls (
        run_id TEXT NOT NULL,
        turn BIGINT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        kind TEXT NOT NULL,
        hash TEXT NOT NULL,
        requested_by TEXT,
        requested_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        state TEXT NOT NULL,
        reason TEXT,
        decided_by TEXT,
        decided_at DOUBLE PRECISION,
        PRIMARY KEY (run_id, turn, call_id))""",
    "CREATE INDEX bloge_pending_calls_by_state ON bloge_pending_calls (state, requested_at)",
    "ALTER TABLE bloge_runs ADD COLUMN tools TEXT",
)

# Version 5: what each shared budget has spent or reserved (a row per scope, key and period:
# a thread's, with period '', or an API key's per day), and one row per model call.
_V5 = (
    """CREATE TABLE bloge_budget_spend (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        period TEXT NOT NULL,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        usd DOUBLE PRECISION NOT NULL DEFAULT 0,
        model_calls BIGINT NOT NULL DEFAULT 0,
        tool_calls BIGINT NOT NULL DEFAULT 0,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (scope, key, period))""",
    """CREATE TABLE bloge_usage (
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        thread_id TEXT,
        agent_id TEXT NOT NULL,
        principal TEXT,
        model TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        cache_read_tokens BIGINT NOT NULL,
        cache_write_tokens BIGINT NOT NULL,
        usd DOUBLE PRECISION NOT NULL,
        reported INTEGER NOT NULL)""",
    "CREATE INDEX bloge_usage_by_time ON bloge_usage (at)",
    "CREATE INDEX bloge_usage_by_run ON bloge_usage (run_id)",
)

# Version 6: the circuit breakers of fallback models (a row per provider route), shared by
# every worker.
_V6 = (
    """CREATE TABLE bloge_circuit_breakers (
        route TEXT PRIMARY KEY,
        failures BIGINT NOT NULL,
        open_until DOUBLE PRECISION,
        updated_at DOUBLE PRECISION NOT NULL)""",
)

# Version 7: the trace context a run was started in, which its resumed spans continue.
_V7 = ("ALTER TABLE bloge_runs ADD COLUMN trace_parent TEXT",)

# Version 8: the result posted for an external call, with the call it answers (a Temporal
# run, which keeps no tool ledger, is sent it from there); the calls by when they were
# answered (/metrics reads the answers since its last scrape).
_V8 = ("ALTER TABLE bloge_pending_calls ADD COLUMN result TEXT",
       "ALTER TABLE bloge_pending_calls ADD COLUMN text_result BIGINT",
       "CREATE INDEX bloge_pending_calls_by_decision ON bloge_pending_calls (decided_at)")

# Version 9: the run that called a sub-agent's run, and a run's children in their order.
_V9 = (
    "ALTER TABLE bloge_runs ADD COLUMN parent_run_id TEXT",
    "CREATE INDEX bloge_runs_by_parent ON bloge_runs (parent_run_id, created_at)",
)

# Version 10: the agent a run goes on with since it handed over (NULL: its own, ``agent_id``).
_V10 = ("ALTER TABLE bloge_runs ADD COLUMN current_agent_id TEXT",)

#: Statements that take a database from version ``n - 1`` to ``n``, for n = 1, 2, …
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9,
                                                _V10)
assert len(MIGRATIONS) == VERSION


class SchemaTooNewError(Exception):
    """The database's schema is newer than this code's (``found``)."""

    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found


class SchemaTooOldError(Exception):
    """The database needs ``bloge store migrate`` (it is at ``found``)."""

    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found


class SchemaMissingError(Exception):
    """The schema the connection's ``search_path`` names (``name``) does not exist and is not
    one name that can be created."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


#: A ``search_path`` that names one schema: an identifier, bare or double-quoted.
_ONE_SCHEMA = re.compile(r'[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"')


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the databases in the schema's upkeep."""

    name: str
    schema_exists: str
    """A query counting the ``bloge_schema`` tables the database has (0 or 1)."""
    lock: str | None = None
    """A statement that makes concurrent migrations wait for each other, if one is needed."""
    missing_schema: str | None = None
    """A query of one row (true when the schema the connection writes to does not exist, the
    ``search_path`` naming it), if the database has schemas."""


SQLITE = Dialect("sqlite", "SELECT COUNT(*) FROM sqlite_master "
                 "WHERE type = 'table' AND name = 'bloge_schema'")
POSTGRES = Dialect("postgresql", "SELECT COUNT(*) FROM pg_tables "
                   "WHERE tablename = 'bloge_schema' AND schemaname = current_schema()",
                   lock="SELECT pg_advisory_xact_lock(7362816253)",
                   missing_schema="SELECT current_schema() IS NULL, "
                                  "current_setting('search_path')")


def ensure(dialect: Dialect, *, apply: bool) -> Script[tuple[int, int]]:
    """Find the database's schema version and bring it up to date (see :func:`migrate`)."""
    if dialect.lock is not None:
        yield Query(dialect.lock)
    if dialect.missing_schema is not None:
        yield from _create_schema(dialect.missing_schema)
    exists = one((yield Query(dialect.schema_exists)))
    found = None
    if exists is not None and exists[0]:
        row = one((yield Query("SELECT MAX(version) FROM bloge_schema")))
        found = None if row is None or row[0] is None else int(row[0])
    return (yield from migrate(found, apply=apply))


def _create_schema(missing_schema: str) -> Script[None]:
    # A URL's ?schema= that names no schema yet: an empty database, created like its tables.
    row = one((yield Query(missing_schema)))
    if row is None or not row[0]:
        return
    name = str(row[1]).strip()
    if not _ONE_SCHEMA.fullmatch(name):
        raise SchemaMissingError(name)
    # The name goes in as search_path has it, so that it resolves to the same schema (a bare
    # name folded to lower case, a quoted one kept); the pattern admits nothing else.
    yield Query(f"CREATE SCHEMA {name}")


def migrate(found: int | None, *, apply: bool) -> Script[tuple[int, int]]:
    """Bring the schema from ``found`` (``None``: empty database) to :data:`VERSION`.

    Returns (version before, version after). Raises :class:`SchemaTooNewError`, or
    :class:`SchemaTooOldError` when an upgrade is due and ``apply`` is false.
    """
    start = found or 0
    if start > VERSION:
        raise SchemaTooNewError(start)
    if start == VERSION:
        return start, start
    if found is not None and not apply:
        raise SchemaTooOldError(start)
    if found is None:
        yield Query("CREATE TABLE IF NOT EXISTS bloge_schema (version BIGINT NOT NULL)")
    for version in range(start + 1, VERSION + 1):
        for statement in MIGRATIONS[version - 1]:
            yield Query(statement)
        yield Query("INSERT INTO bloge_schema (version) VALUES (?)", (version,))
    return start, VERSION
