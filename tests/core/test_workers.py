"""``WorkerPool``: the bounded daemon threads that sync operators run on."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bloge import BlogeUsageError, OperatorContext, OperatorRegistry
from bloge.core import WorkerPool
from bloge.core.workers import default_max_threads

WAIT_SECONDS = 10.0  # only reached when a test is about to fail anyway
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


class Blocked:
    """Sync functions that block until released, counting how many run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.changed = threading.Condition()
        self.release = threading.Event()

    def __call__(self, name: str = "") -> str:
        with self.changed:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.changed.notify_all()
        self.release.wait(WAIT_SECONDS)
        with self.changed:
            self.running -= 1
        return name

    async def until_running(self, count: int) -> None:
        def wait() -> None:
            with self.changed:
                assert self.changed.wait_for(lambda: self.running >= count, WAIT_SECONDS)

        await asyncio.to_thread(wait)


@pytest.fixture
def blocked() -> Iterator[Blocked]:
    calls = Blocked()
    yield calls
    calls.release.set()  # threads left blocked by a test end with it


async def abandon(pool: WorkerPool, fn: Blocked) -> None:
    """Start ``fn`` on ``pool`` and, once it runs, give up on it (as a tool timeout does)."""
    call = asyncio.ensure_future(pool.run(fn))
    await fn.until_running(fn.running + 1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_at_most_max_threads_calls_run_at_once(blocked: Blocked) -> None:
    pool = WorkerPool(2)
    calls = asyncio.gather(*(pool.run(blocked, str(n)) for n in range(5)))
    await blocked.until_running(2)
    blocked.release.set()
    assert await calls == ["0", "1", "2", "3", "4"]
    assert blocked.peak == 2


async def test_an_abandoned_call_frees_its_slot_while_its_thread_runs_on(blocked: Blocked) -> None:
    pool = WorkerPool(1)
    await abandon(pool, blocked)
    assert await pool.run(str.upper, "next") == "NEXT"
    assert blocked.running == 1  # the abandoned function has not returned


async def test_a_call_abandoned_while_waiting_for_a_slot_never_runs(blocked: Blocked) -> None:
    pool = WorkerPool(1)
    first = asyncio.ensure_future(pool.run(blocked, "first"))
    await blocked.until_running(1)
    ran: list[str] = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await pool.run(ran.append, "abandoned")
    blocked.release.set()
    assert await first == "first"
    await pool.run(ran.append, "later")
    assert ran == ["later"]


async def test_abandoned_calls_past_max_threads_keep_their_slots(blocked: Blocked) -> None:
    pool = WorkerPool(1)
    await abandon(pool, blocked)  # frees its slot
    await abandon(pool, blocked)  # one abandoned call already: keeps its slot
    ran: list[str] = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await pool.run(ran.append, "blocked out")
    assert ran == []
    assert blocked.running == 2


async def test_errors_reach_the_caller() -> None:
    def fail() -> None:
        raise ValueError("no luck")

    with pytest.raises(ValueError, match="no luck"):
        await WorkerPool(1).run(fail)


async def test_stop_iteration_is_raised_as_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="StopIteration"):
        await WorkerPool(1).run(next, iter(()))


async def test_the_callers_context_variables_reach_the_call() -> None:
    request_id.set("req-7")
    assert await WorkerPool(1).run(request_id.get) == "req-7"


async def test_pool_threads_are_daemons_that_never_hold_the_interpreter_at_exit() -> None:
    assert await WorkerPool(1).run(lambda: threading.current_thread().daemon) is True


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_a_pool_needs_a_positive_whole_number_of_threads(size: object) -> None:
    with pytest.raises(BlogeUsageError, match="max_threads >= 1"):
        WorkerPool(size)  # type: ignore[arg-type]  # the wrong types are the point


def test_the_default_size_follows_concurrent_futures() -> None:
    assert default_max_threads() == min(32, (os.cpu_count() or 1) + 4)
    assert WorkerPool().max_threads == default_max_threads()


async def test_a_registry_runs_its_sync_operators_on_the_pool_it_was_given() -> None:
    registry = OperatorRegistry({"where": lambda input: threading.current_thread().name},
                                workers=WorkerPool(1, name="reports-pool"))
    assert await registry.bound("where").invoke(None, OperatorContext.root()) == "reports-pool"


async def test_a_call_that_gets_no_thread_fails_and_frees_its_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = WorkerPool(1)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", refuse)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            await pool.run(str.upper, "refused")
    assert await pool.run(str.upper, "next") == "NEXT"


async def test_calls_one_after_another_reuse_one_thread() -> None:
    pool = WorkerPool(4)
    threads = {await pool.run(threading.get_ident) for _ in range(20)}
    assert len(threads) == 1


async def test_calls_finished_together_all_reach_their_callers(blocked: Blocked) -> None:
    pool = WorkerPool(3)
    calls = asyncio.gather(*(pool.run(blocked, str(n)) for n in range(3)))
    await blocked.until_running(3)
    blocked.release.set()
    assert await calls == ["0", "1", "2"]


class NoDescriptorsLoop(asyncio.SelectorEventLoop):
    """A loop that cannot watch file descriptors, as the proactor loop on Windows."""

    def add_reader(self, *args: object) -> None:
        raise NotImplementedError


def test_a_loop_that_cannot_watch_descriptors_still_gets_results_and_errors() -> None:
    pool = WorkerPool(1)
    loop = NoDescriptorsLoop()
    try:
        assert loop.run_until_complete(pool.run(str.upper, "ok")) == "OK"
        with pytest.raises(ValueError, match="invalid literal"):
            loop.run_until_complete(pool.run(int, "x"))
    finally:
        loop.close()


DESCRIPTORS = Path("/proc/self/fd")


@pytest.mark.skipif(not DESCRIPTORS.is_dir(), reason="counts descriptors in /proc")
def test_loops_that_are_gone_leave_no_descriptors_open() -> None:
    pool = WorkerPool(1)
    asyncio.run(pool.run(str.upper, "warm up"))
    gc.collect()
    before = len(list(DESCRIPTORS.iterdir()))
    for _ in range(5):
        assert asyncio.run(pool.run(str.upper, "x")) == "X"
    gc.collect()
    # At most as many: what earlier tests left to the collector may close some meanwhile.
    assert len(list(DESCRIPTORS.iterdir())) <= before
