"""``Store``: threads, runs and their events, read over one backend driver.

The store reads, and runs the scripts of whoever writes through it in its transactions: a
run's writes are :class:`~bloge.store.writer.StoreWriter`'s, running an agent on a store is
:class:`~bloge.store.runs.RecordedRuns`', the autopilot's ledger is
:class:`bloge.autopilot.ledger.AuditLedger`'s.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal, Protocol, Self, TypeVar, runtime_checkable

from bloge.core.errors import BlogeUsageError
from bloge.core.sync import run_sync
from bloge.journal.redaction import JSON_FIELDS, TEXT_FIELDS, Redactor
from bloge.llm import LlmMessage
from bloge.store import owner as process_owner
from bloge.store.call_journal import CallJournal
from bloge.store.cancels import CHANNEL, POLL_SECONDS, CancelSignals
from bloge.store.errors import StoreError, StoreNotFoundError
from bloge.store.leases import Leases
from bloge.store.live import LiveRuns
from bloge.store.records import (
    Run,
    RunEvent,
    RunStatus,
    Segment,
    StoredMessage,
    Thread,
    ToolCallRecord,
    TurnCheckpoint,
)
from bloge.store.sql import check as view_check
from bloge.store.sql import pending, reads, schema, writes
from bloge.store.sql.check import DanglingView
from bloge.store.sql.script import Script
from bloge.store.urls import DEFAULT_URL, parse_store_url

T = TypeVar("T")

#: How long a worker holds a run and its thread without renewing (seconds).
DEFAULT_LEASE = 30.0


class Driver(Protocol):
    """Runs a script in one transaction (see :mod:`bloge.store.sql.script`)."""

    dialect: str
    display: str

    async def run(self, script: Script[T], *, write: bool, blind: bool = False) -> T: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Notifying(Protocol):
    """A driver whose database tells its listeners what another connection notifies
    (PostgreSQL): cancels are heard at once instead of polled."""

    async def notify(self, channel: str, payload: str) -> None: ...

    def listen(self, channel: str, *, every: float) -> AsyncGenerator[str | None, None]: ...


@dataclass(frozen=True, slots=True)
class Pruned:
    """What :meth:`Store.prune` deleted."""

    runs: int
    threads: int


class Store:
    """The run store: threads with their message logs, runs with their events, checkpoints
    and tool-call ledgers. Open one with :func:`open_store`; close it with :meth:`aclose`
    (or ``async with``), or with :meth:`close` (or ``with``) when it served the sync methods
    (``execute()``, ``run()``).

    The schema is created on first use and upgraded when ``auto_migrate`` is on; a database
    written by a newer bloge is refused. Every failure is a :class:`StoreError` naming the
    store (its URL, password masked).
    """

    def __init__(self, driver: Driver, *, auto_migrate: bool = True,
                 lease: float = DEFAULT_LEASE, clock: Callable[[], float] = time.time,
                 redact_keys: Iterable[str] = (), secrets: Iterable[str] = ()) -> None:
        if lease <= 0:
            raise BlogeUsageError(f"a store lease must be positive, got {lease!r}")
        self._driver = driver
        #: The runs this process runs now, for whoever watches them live.
        self.live = LiveRuns()
        #: Redacts the runs' events and errors as the journal does its lines.
        self.redactor = Redactor(redact_keys, secrets, json_keys=JSON_FIELDS,
                                 text_keys=TEXT_FIELDS)
        #: Tells the runs this process runs that someone asked them to stop.
        self.cancels = CancelSignals(
            asked=self._asked_to_stop,
            listen=(lambda: driver.listen(CHANNEL, every=POLL_SECONDS))
            if isinstance(driver, Notifying) else None)
        #: Renews the leases of the runs this process runs, every third of the lease.
        self.leases = Leases(lambda: self.lease / 3)
        #: Traces the runs recorded here from their events (a ``bloge.tracing.RunTracing``;
        #: ``None``: not traced, nothing of OpenTelemetry loaded). See :mod:`bloge.store.traced`.
        self.tracing: Any = None
        self._auto_migrate = auto_migrate
        self._ready = False
        self.lease = lease
        self.clock = clock
        #: Seconds an approval request waits before it counts as denied (``None``: no
        #: expiry); the ``bloge.approvals.expiry`` setting, where the app sets it.
        self.approval_expiry: float | None = None
        #: Seconds an external call waits for its posted result before the run goes on with
        #: an error result for it (``None``: no expiry); ``bloge.approvals.tool-results-expiry``.
        self.tool_results_expiry: float | None = None
        #: Told of the events of the calls paused runs wait on as they are written (see
        #: :mod:`bloge.store.call_journal`); ``None``: no one.
        self.call_journal: CallJournal | None = None

    @property
    def url(self) -> str:
        """The store's URL, password masked."""
        return self._driver.display

    @property
    def dialect(self) -> str:
        """The database's kind: ``"sqlite"`` or ``"postgresql"``."""
        return self._driver.dialect

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.cancels.aclose()
        await self._driver.aclose()

    def close(self) -> None:
        """:meth:`aclose` for synchronous code: closes the store on the event loop that the
        sync methods run on (a clear error inside a running event loop: await ``aclose()``)."""
        run_sync(self.aclose(), method="close")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # -- schema

    async def migrate(self) -> tuple[int, int]:
        """Bring the schema up to date; (version before, version after)."""
        versions = await self._schema(apply=True)
        self._ready = True
        return versions

    async def _schema(self, *, apply: bool) -> tuple[int, int]:
        dialect = schema.POSTGRES if self._driver.dialect == "postgresql" else schema.SQLITE
        try:
            return await self._driver.run(schema.ensure(dialect, apply=apply), write=True)
        except schema.SchemaTooNewError as exc:
            raise StoreError(f"its schema (version {exc.found}) is newer than this bloge "
                             f"understands (version {schema.VERSION}); upgrade bloge",
                             store=self.url) from None
        except schema.SchemaMissingError as exc:
            raise StoreError(f"no schema of the search path {exc.name!r} exists; name one "
                             "schema with ?schema=NAME (bloge creates it) or create them",
                             store=self.url) from None
        except schema.SchemaTooOldError as exc:
            raise StoreError(f"its schema (version {exc.found}) is older than this bloge's "
                             f"(version {schema.VERSION}); run bloge store migrate",
                             store=self.url) from None

    async def run_script(self, script: Script[T], *, write: bool = False,
                         blind: bool = False) -> T:
        """Run ``script`` in one transaction of the store's driver (``write``: one that may
        write; ``blind``: whose writes read nothing they depend on), the schema made ready
        first. What the store's readers, its :class:`~bloge.store.writer.StoreWriter` and
        the autopilot's ledger go through."""
        if not self._ready:
            try:
                await self._schema(apply=self._auto_migrate)
            except BaseException:
                script.close()
                raise
            self._ready = True
        return await self._driver.run(script, write=write, blind=blind)

    # -- threads

    async def get_thread(self, thread_id: str, *, owner: str | None = None) -> Thread:
        """The thread; :class:`StoreNotFoundError` when there is none, or, with ``owner``,
        when it is not that principal's (the same error: whether another's exists is not
        told)."""
        found = await self.run_script(reads.get_thread(thread_id, now=self.clock(), owner=owner))
        if found is None:
            raise StoreNotFoundError(f"no thread {thread_id!r}", store=self.url)
        return found

    async def find_thread(self, prefix: str) -> Thread:
        """The thread whose id is, or uniquely starts with, ``prefix`` (as :meth:`find_run`)."""
        return await self.get_thread(await self._id_starting("thread", prefix))

    async def list_threads(self, *, limit: int = 50, owner: str | None = None,
                           containing: str | None = None, evals: bool = True) -> list[Thread]:
        """The most recently active threads first; with ``owner``, only that principal's;
        with ``containing``, only those whose id or one of whose messages holds that text
        (in any case); with ``evals=False``, not the threads of evals' cases (see
        :data:`~bloge.store.EVAL_TAG`)."""
        return await self.run_script(reads.list_threads(limit=limit, now=self.clock(),
                                                        owner=owner, containing=containing,
                                                        evals=evals))

    async def thread_messages(self, thread_id: str, *, after: int = 0, limit: int | None = None,
                              owner: str | None = None) -> list[StoredMessage]:
        """The thread's log from message ``after + 1`` on (at most ``limit``); ``owner`` as
        for :meth:`get_thread`."""
        thread = await self.get_thread(thread_id, owner=owner)
        last = thread.message_count if limit is None else min(thread.message_count,
                                                               after + limit)
        if last <= after:
            return []
        return await self.run_script(reads.messages(thread_id, [(after + 1, last)]))

    async def resolve_view(self, thread_id: str,
                           view: Sequence[Segment]) -> list[StoredMessage | LlmMessage]:
        """The messages a memory view refers to, in its order: those of the thread's log as
        :class:`StoredMessage`, those held inline as they are."""
        ranges = [segment for segment in view if isinstance(segment, tuple)]
        stored = await self.run_script(reads.messages(thread_id, ranges)) if ranges else []
        by_seq = {m.seq: m for m in stored}
        found: list[StoredMessage | LlmMessage] = []
        for segment in view:
            if isinstance(segment, LlmMessage):
                found.append(segment)
                continue
            for seq in range(segment[0], segment[1] + 1):
                if seq not in by_seq:
                    raise StoreError(f"thread {thread_id!r} has no message {seq}, which a "
                                     "checkpoint refers to (bloge store check --repair mends "
                                     "the thread)", store=self.url)
                found.append(by_seq[seq])
        return found

    # -- runs

    async def get_run(self, run_id: str, *, owner: str | None = None) -> Run:
        """The run; :class:`StoreNotFoundError` when there is none, or, with ``owner``, when
        it is not that principal's (the same error). A run whose worker was a process of this
        host that no longer exists is ``interrupted`` at once, as one whose lease ended (see
        :mod:`bloge.store.owner`). A paused run's ``pending_approvals`` are the calls it waits
        on: its own, then those of the paused runs it started (its sub-agents')."""
        now = self.clock()
        found = await self.run_script(reads.get_run(run_id, now=now, owner=owner))
        if found is None:
            raise StoreNotFoundError(f"no run {run_id!r}", store=self.url)
        if found.status is RunStatus.RUNNING and found.worker is not None \
                and process_owner.gone(found.worker):
            again = await self.run_script(reads.get_run(run_id, now=now, gone=(found.worker,)))
            return found if again is None else again
        if found.status.paused:
            waited = await self.run_script(pending.pending_calls(run_id, found.turns))
            below = await self.run_script(pending.waiting_below(run_id))
            return replace(found, pending_approvals=(
                *(call for call in waited if call.state == "waiting"), *below))
        return found

    async def find_run(self, prefix: str) -> Run:
        """The run whose id is, or uniquely starts with, ``prefix`` (not blank: that would
        be the start of every id, and a store of one run would answer with it)."""
        return await self.get_run(await self._id_starting("run", prefix))

    async def _id_starting(self, kind: Literal["run", "thread"], prefix: str) -> str:
        """The id of the run or thread that is, or uniquely starts with, ``prefix``."""
        if not prefix.strip():
            raise BlogeUsageError(f"no {kind} id given ({prefix!r}); give a {kind}'s id or the "
                                  f"start of one (bloge {kind}s list shows them)")
        ids = await self.run_script(reads.ids_starting(kind, prefix, limit=11))
        if prefix in ids or len(ids) == 1:
            return prefix if prefix in ids else ids[0]
        if not ids:
            raise StoreNotFoundError(f"no {kind} {_given(prefix)}", store=self.url)
        shown = ", ".join(ids[:10])
        raise BlogeUsageError(f"{prefix!r} is the start of several {kind} ids; give more of it "
                              f"(most recent first: {shown})")

    async def list_runs(self, *, thread_id: str | None = None, status: RunStatus | None = None,
                        limit: int = 50, evals: bool = True) -> list[Run]:
        """Runs, newest first, of one thread and/or in one status; with ``evals=False``, not
        the runs of evals' cases (see :data:`~bloge.store.EVAL_TAG`)."""
        now = self.clock()
        leased = await self.run_script(reads.leased_workers(now=now))
        gone = [worker for worker in leased if process_owner.gone(worker)]
        return await self.run_script(reads.list_runs(thread_id=thread_id, status=status,
                                                     limit=limit, now=now, gone=gone,
                                                     evals=evals))

    async def child_runs(self, run_id: str) -> list[Run]:
        """The runs the tool calls of ``run_id`` started (its sub-agents'), oldest first."""
        now = self.clock()
        leased = await self.run_script(reads.leased_workers(now=now))
        gone = [worker for worker in leased if process_owner.gone(worker)]
        return await self.run_script(reads.child_runs(run_id, now=now, gone=gone))

    async def run_events(self, run_id: str, *, after: int = 0,
                         limit: int = 100_000) -> list[RunEvent]:
        """The run's events numbered above ``after``, in order."""
        return await self.run_script(reads.events(run_id, after=after, limit=limit))

    async def latest_checkpoint(self, run_id: str) -> TurnCheckpoint | None:
        return await self.run_script(reads.latest_checkpoint(run_id))

    async def tool_calls(self, run_id: str, turn: int) -> list[ToolCallRecord]:
        """The ledger of one turn's tool calls, in the model's order."""
        return await self.run_script(reads.tool_calls(run_id, turn))

    async def cancel_run(self, run_id: str, *, owner: str | None = None) -> Run:
        """Ask the run to stop. A running run's worker hears it within a second (see
        :mod:`bloge.store.cancels`) and stops it; a run that nobody runs any more is cancelled
        at once. With ``owner``, only that principal's run (another's is not found)."""
        if owner is not None:
            await self.get_run(run_id, owner=owner)
        status = await self.run_script(writes.request_cancel(run_id=run_id, now=self.clock()),
                                       write=True)
        if status is None:
            raise StoreNotFoundError(f"no run {run_id!r}", store=self.url)
        if status == RunStatus.RUNNING.value:
            self.cancels.wake(run_id)
            if isinstance(self._driver, Notifying):
                await self._driver.notify(CHANNEL, run_id)
        return await self.get_run(run_id)

    async def check(self, *, repair: bool = False) -> list[DanglingView]:
        """Memory views — threads' and checkpoints' — that refer to messages their thread's
        log lacks (a run's write the store refused left them, before bloge kept such writes
        for the next one); mended when ``repair`` (see :mod:`bloge.store.sql.check`)."""
        return await self.run_script(view_check.check(repair=repair), write=repair)

    async def _asked_to_stop(self, run_ids: Collection[str]) -> list[str]:
        return await self.run_script(reads.asked_to_stop(list(run_ids)))

    async def prune(self, *, older_than: float) -> Pruned:
        """Delete what ended more than ``older_than`` seconds ago (see :func:`writes.prune`)."""
        runs, threads = await self.run_script(writes.prune(before=self.clock() - older_than),
                                              write=True)
        return Pruned(runs, threads)


def _given(text: str, most: int = 80) -> str:
    """``text`` a user gave as an id, quoted, shortened past ``most`` characters."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}… ({len(text)} characters)"


def open_store(url: str = DEFAULT_URL, *, base_dir: str | os.PathLike[str] | None = None,
                     auto_migrate: bool = True, lease: float = DEFAULT_LEASE,
                     busy_timeout: float = 5.0, redact_keys: Iterable[str] = (),
                     secrets: Iterable[str] = ()) -> Store:
    """The store at ``url``: ``memory://`` (gone when closed), ``sqlite:///path.db`` (relative
    to ``base_dir``, default the working directory) or ``postgresql://user@host/db``
    (``pip install 'bloge[postgres]'``; ``?schema=name`` picks the schema). Nothing is
    opened until first use; a database that cannot be used fails then with a
    :class:`StoreError`. ``busy_timeout`` is how long a SQLite write waits for another
    process's lock, in seconds. A run's events and errors are redacted as the journal's lines
    are: ``redact_keys`` adds sensitive names, ``secrets`` are values to hide (API keys)."""
    parsed = parse_store_url(url, base_dir=base_dir)
    driver: Driver
    if parsed.scheme == "postgresql":
        from bloge.store.sql.postgres import PostgresDriver

        assert parsed.conninfo is not None
        driver = PostgresDriver(parsed.conninfo, display=parsed.display,
                                secrets=(parsed.password or "",),
                                search_path=parsed.search_path,
                                synchronous_commit=parsed.synchronous_commit)
    else:
        from bloge.store.sql.sqlite import SqliteDriver

        driver = SqliteDriver(parsed.path or ":memory:", display=parsed.display,
                              busy_timeout=busy_timeout)
    return Store(driver, auto_migrate=auto_migrate, lease=lease, redact_keys=redact_keys,
                 secrets=secrets)
