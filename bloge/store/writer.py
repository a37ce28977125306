"""``RunWriter``: what a recorder writes of a run, and ``StoreWriter``, which writes it to a
:class:`~bloge.store.store.Store`.

Both recorders go through it — a local run's (:mod:`bloge.store.recorder`) and a Temporal
run's (:mod:`bloge.temporal.recording`): a run takes its thread (or takes it back, or joins
its caller's under the caller's hold: a sub-agent's on its caller's thread), writes
batches of :mod:`bloge.store.ops` as it goes, each in one transaction, and renews its lease
on the thread while it runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from bloge.llm import LlmMessage
from bloge.store import ops
from bloge.store.call_journal import told
from bloge.store.errors import StoreError, StoreNotFoundError, ThreadBusyError
from bloge.store.records import Run, RunStatus
from bloge.store.sql import writes
from bloge.store.sql.writes import Busy, Claim, Foreign
from bloge.store.store import Store


class RunWriter(Protocol):
    """The writes of a recorded run. A :class:`Claim` says where the thread's log goes on
    and the memory view the run starts from."""

    async def start_run(self, *, run_id: str, thread_id: str, agent_id: str,
                        input: Sequence[LlmMessage], metadata: Mapping[str, Any] | None,
                        worker: str, owner: str | None = None,
                        own_thread_only: bool = False, new_thread: bool = False) -> Claim:
        """Start run ``run_id`` on ``thread_id`` (created when new), both ``owner``'s; with
        ``own_thread_only``, a thread of another principal's (or of nobody's) is not found;
        :class:`ThreadBusyError` while another run holds the thread. ``new_thread`` says
        ``thread_id`` is an id the caller has just made: no thread has it."""
        ...

    async def reclaim_run(self, run: Run, *, worker: str, retried_start: bool = False) -> Claim:
        """Take ``run`` (stopped, not running) and its thread back, to continue it; with
        ``retried_start``, ``run`` is being started again by whoever started it (an activity
        retried after its first attempt wrote the start), and is taken even while it runs."""
        ...

    async def join_run(self, *, run_id: str, thread_id: str, holder: str, parent_run_id: str,
                       agent_id: str, input: Sequence[LlmMessage], worker: str,
                       owner: str | None = None) -> None:
        """Start run ``run_id``, a child of run ``parent_run_id``, on ``thread_id`` under the
        hold of run ``holder`` (the parent, or an ancestor of it), without taking the
        thread: a sub-agent's run on its caller's thread. :class:`ThreadBusyError` when
        another run holds the thread."""
        ...

    async def rejoin_run(self, run: Run, *, holder: str, worker: str) -> None:
        """Take ``run`` (stopped, not running, started by :meth:`join_run`) back under the
        hold of run ``holder`` on its thread, to continue it."""
        ...

    async def append_guest_messages(self, *, run_id: str, thread_id: str, holder: str,
                                    first: int, messages: Sequence[LlmMessage],
                                    ) -> tuple[int, ...]:
        """Append ``messages`` of run ``run_id``, a guest on ``thread_id`` under the hold of
        run ``holder`` (started by :meth:`join_run`), numbered by the store as they are
        written: their numbers. ``first``: how many the run appended before (a retry gets
        the numbers of those it wrote already back). :class:`ThreadBusyError` when another
        run holds the thread."""
        ...

    async def write(self, batch: Sequence[ops.Op]) -> None:
        """Apply ``batch`` in one transaction: all of it, or none (a
        :class:`~bloge.store.StoreError`)."""
        ...

    async def renew_lease(self, *, run_id: str, thread_id: str, worker: str) -> bool | None:
        """Extend the run's lease: whether it was asked to cancel; ``None`` if it was lost."""
        ...

    async def renew_waiting(self, *, run_ids: Sequence[str], worker: str) -> frozenset[str]:
        """Extend the leases of runs ``run_ids`` of ``worker`` that wait on the renewing run
        and hold nothing of their own that renews them (a Temporal child workflow's callers,
        which run no activity while they wait): those asked to cancel."""
        ...


class StoreWriter:
    """The :class:`RunWriter` of ``store``: leases last ``store.lease`` seconds of
    ``store.clock``."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"StoreWriter({self.store!r})"

    async def start_run(self, *, run_id: str, thread_id: str, agent_id: str,
                        input: Sequence[LlmMessage], metadata: Mapping[str, Any] | None,
                        worker: str, owner: str | None = None,
                        own_thread_only: bool = False, new_thread: bool = False) -> Claim:
        store = self.store
        now = store.clock()
        if new_thread:  # nothing to read: one round trip
            return await store.run_script(writes.start_run_on_new_thread(
                run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
                metadata=metadata, worker=worker, lease_until=now + store.lease, now=now,
                owner=owner), write=True, blind=True)
        claim = await store.run_script(writes.start_run(
            run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
            metadata=metadata, worker=worker, lease_until=now + store.lease, now=now,
            owner=owner, own_thread_only=own_thread_only), write=True)
        if isinstance(claim, Busy):
            holder = await store.get_run(claim.run_id)
            if holder.status is not RunStatus.RUNNING and holder.worker is not None:
                # Held by a run whose process on this host is gone: free at once.
                claim = await store.run_script(writes.start_run(
                    run_id=run_id, thread_id=thread_id, agent_id=agent_id, input=input,
                    metadata=metadata, worker=worker, lease_until=now + store.lease, now=now,
                    takeover=writes.Takeover(holder.id, holder.worker), owner=owner,
                    own_thread_only=own_thread_only), write=True)
            elif holder.status.paused:
                raise ThreadBusyError(thread_id, holder.id, store=store.url,
                                      paused=holder.status.value,
                                      answered=not holder.pending_approvals)
        if isinstance(claim, Foreign):
            raise StoreNotFoundError(f"no thread {thread_id!r}", store=store.url)
        return self._claimed(thread_id, claim)

    async def reclaim_run(self, run: Run, *, worker: str, retried_start: bool = False) -> Claim:
        store = self.store
        now = store.clock()
        if run.status is RunStatus.RUNNING and not retried_start:
            left = None if run.lease_until is None else run.lease_until - now
            raise ThreadBusyError(run.thread_id, run.id, store=store.url, lease_left=left)
        claim = await store.run_script(writes.resume_run(
            run_id=run.id, thread_id=run.thread_id, worker=worker,
            lease_until=now + store.lease, now=now, previous_worker=run.worker), write=True)
        return self._claimed(run.thread_id, claim)

    async def join_run(self, *, run_id: str, thread_id: str, holder: str, parent_run_id: str,
                       agent_id: str, input: Sequence[LlmMessage], worker: str,
                       owner: str | None = None) -> None:
        store = self.store
        now = store.clock()
        busy = await store.run_script(writes.join_run(
            run_id=run_id, thread_id=thread_id, holder=holder, parent_run_id=parent_run_id,
            agent_id=agent_id, input=input, worker=worker, lease_until=now + store.lease,
            now=now, owner=owner), write=True)
        if busy is not None:
            raise _not_held(thread_id, holder, busy, store=store.url)

    async def rejoin_run(self, run: Run, *, holder: str, worker: str) -> None:
        store = self.store
        now = store.clock()
        if run.status is RunStatus.RUNNING:
            left = None if run.lease_until is None else run.lease_until - now
            raise ThreadBusyError(run.thread_id, run.id, store=store.url, lease_left=left)
        busy = await store.run_script(writes.rejoin_run(
            run_id=run.id, thread_id=run.thread_id, holder=holder, worker=worker,
            lease_until=now + store.lease, now=now, previous_worker=run.worker), write=True)
        if busy is not None and busy.run_id == run.id:
            raise ThreadBusyError(run.thread_id, run.id, store=store.url)  # resumed by another
        if busy is not None:
            raise _not_held(run.thread_id, holder, busy, store=store.url)

    async def append_guest_messages(self, *, run_id: str, thread_id: str, holder: str,
                                    first: int, messages: Sequence[LlmMessage],
                                    ) -> tuple[int, ...]:
        store = self.store
        numbered = await store.run_script(writes.append_guest_messages(
            thread_id=thread_id, run_id=run_id, holder=holder, first=first,
            messages=messages, now=store.clock()), write=True)
        if isinstance(numbered, Busy):
            raise _not_held(thread_id, holder, numbered, store=store.url)
        return numbered

    def _claimed(self, thread_id: str, claim: Claim | Busy) -> Claim:
        if isinstance(claim, Busy):
            raise ThreadBusyError(thread_id, claim.run_id, store=self.store.url)
        return claim

    async def write(self, batch: Sequence[ops.Op]) -> None:
        if batch:
            # Events the store numbers are numbered from what it reads: not blind then.
            blind = not any(isinstance(op, ops.AppendRunEvents) for op in batch)
            await self.store.run_script(writes.apply(batch), write=True, blind=blind)
            told(self.store.call_journal, (
                event for op in batch if isinstance(op, ops.AppendEvents | ops.AppendRunEvents)
                for event in op.events))

    async def renew_lease(self, *, run_id: str, thread_id: str, worker: str) -> bool | None:
        store = self.store
        return await store.run_script(writes.renew_lease(
            run_id=run_id, thread_id=thread_id, worker=worker,
            lease_until=store.clock() + store.lease), write=True)

    async def renew_waiting(self, *, run_ids: Sequence[str], worker: str) -> frozenset[str]:
        if not run_ids:
            return frozenset()
        store = self.store
        return await store.run_script(writes.renew_waiting(
            run_ids=run_ids, worker=worker, lease_until=store.clock() + store.lease),
            write=True)


def _not_held(thread_id: str, holder: str, busy: Busy, *, store: str) -> StoreError:
    """Why a run cannot go on under the hold of run ``holder`` on ``thread_id``: another run
    holds the thread (``busy``'s), or none does."""
    if busy.run_id:
        return ThreadBusyError(thread_id, busy.run_id, store=store)
    return StoreError(f"thread {thread_id!r} is no longer held by run {holder!r}, whose "
                      "sub-agent was to run on it: resume that run", store=store)
