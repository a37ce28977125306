"""``Leases``: one task renews the leases of every run held in an event loop, on a round every
third of the lease and at once for a run that may have been asked to stop; a recorded run
asked to stop through the store is stopped by its renewal. A run's renewal may renew those
of the runs waiting on it too (a Temporal child workflow's callers, which run nothing while
they wait), on every backend."""

from __future__ import annotations

import asyncio

from bloge.store import Store, open_store
from bloge.store.leases import Leases, Renew
from bloge.store.owner import this_worker
from bloge.store.recorder import Recorder
from bloge.store.thread_log import ThreadLog
from bloge.store.writer import StoreWriter

NEVER = 3600.0  # a round that never comes in a test: renewals happen only when asked


class Renewals:
    """Each run's renewals, answering ``going_on``; ``renewed`` is set at each one."""

    def __init__(self, *, going_on: bool = True) -> None:
        self.going_on = going_on
        self.count: dict[str, int] = {}
        self.renewed = asyncio.Event()

    def of(self, run_id: str) -> Renew:
        async def renew() -> bool:
            self.count[run_id] = self.count.get(run_id, 0) + 1
            self.renewed.set()
            return self.going_on
        return renew


def keepers() -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks() if task.get_name() == "bloge-store-leases"]


async def test_one_task_renews_the_leases_of_many_runs() -> None:
    leases, renewals = Leases(lambda: NEVER), Renewals()
    with leases.held("run-1", renewals.of("run-1")), leases.held("run-2", renewals.of("run-2")), \
            leases.held("run-3", renewals.of("run-3")):
        assert len(keepers()) == 1


async def test_a_run_asked_for_is_renewed_at_once_and_alone() -> None:
    leases, renewals = Leases(lambda: NEVER), Renewals()
    with leases.held("run-1", renewals.of("run-1")) as renew_now, \
            leases.held("run-2", renewals.of("run-2")):
        renew_now()
        await renewals.renewed.wait()
    assert renewals.count == {"run-1": 1}


async def test_a_round_renews_every_lease() -> None:
    leases, renewals = Leases(lambda: 0.0), Renewals()
    with leases.held("run-1", renewals.of("run-1")), leases.held("run-2", renewals.of("run-2")):
        while len(renewals.count) < 2:
            renewals.renewed.clear()
            await renewals.renewed.wait()


async def test_a_run_stopped_by_its_renewal_is_renewed_no_more_and_the_task_ends() -> None:
    leases, renewals = Leases(lambda: NEVER), Renewals(going_on=False)
    with leases.held("run-1", renewals.of("run-1")) as renew_now:
        (keeper,) = keepers()
        renew_now()
        await keeper  # its one lease is no longer held: nothing is left to renew
        renew_now()
    assert renewals.count == {"run-1": 1}
    assert not keepers()


async def test_a_recorded_run_asked_to_stop_through_the_store_is_cancelled() -> None:
    store = open_store("memory://", lease=NEVER)  # no round: only the ask renews
    await StoreWriter(store).start_run(run_id="run-1", thread_id="thread-1", agent_id="a",
                                       input=(), metadata=None, worker=this_worker())
    recorder = Recorder(store, StoreWriter(store), run_id="run-1",
                        log=ThreadLog(store, "thread-1", holder="run-1", next_seq=1))
    started = asyncio.Event()

    async def run() -> None:
        async with recorder.leased():
            started.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(run())
    await started.wait()
    await store.cancel_run("run-1")
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert recorder.cancel_requested
    await store.aclose()



async def test_renewing_waiting_runs_extends_their_leases_and_their_threads(
        store: Store) -> None:
    now = [1000.0]
    store.clock = lambda: now[0]
    writer = StoreWriter(store)
    for run_id in ("caller", "grandcaller"):
        await writer.start_run(run_id=run_id, thread_id=f"thread-{run_id}", agent_id="a",
                               input=(), metadata=None, worker="temporal:q")
    now[0] += store.lease - 5
    asked = await writer.renew_waiting(run_ids=["caller", "grandcaller"], worker="temporal:q")
    now[0] += store.lease - 5  # past the leases the runs took, within the renewed ones
    assert asked == frozenset()
    for run_id in ("caller", "grandcaller"):
        assert (await store.get_run(run_id)).status.value == "running"
        assert (await store.get_thread(f"thread-{run_id}")).active_run_id == run_id


async def test_renewing_waiting_runs_tells_those_asked_to_cancel_and_leaves_others_alone(
        store: Store) -> None:
    now = [1000.0]
    store.clock = lambda: now[0]
    writer = StoreWriter(store)
    for run_id, worker in (("asked", "temporal:q"), ("lapsed", "temporal:q"),
                           ("elsewhere", "temporal:other")):
        await writer.start_run(run_id=run_id, thread_id=f"thread-{run_id}", agent_id="a",
                               input=(), metadata=None, worker=worker)
    await store.cancel_run("asked")  # its lease holds: an ask its renewal reads
    now[0] += store.lease + 1
    await store.cancel_run("lapsed")  # its lease ended: cancelled at once in the store
    asked = await writer.renew_waiting(run_ids=["asked", "lapsed", "elsewhere"],
                                       worker="temporal:q")
    assert asked == frozenset({"asked", "lapsed"})
    # Another worker's run is no renewal of this one's to make.
    assert (await store.get_run("elsewhere")).status.value == "interrupted"
