"""``WorkerPool``: the threads that run sync operators for the event loop.

DESIGN. A sync operator (a plain ``def`` tool, say) must not block the event loop, so
:class:`~bloge.core.operator.BoundOperator` runs it here and awaits the result. bloge keeps
its own pool instead of asyncio's default executor, because that executor also serves the
loop's ``getaddrinfo``: tools that hang there starve DNS, and a later provider call fails
with a connect timeout. The pool is shared by every event loop and thread of the process.

- Bounded: at most ``max_threads`` calls run at once (default ``min(32, cpu_count + 4)``, as
  in ``concurrent.futures``); more calls wait in order, which counts against their timeout.
- Daemon threads, never joined: a function that never returns cannot hold the interpreter
  at exit (``ThreadPoolExecutor`` joins its threads, so a hung tool would hang ``bloge run``).
- Abandoned calls: when the awaiting task is cancelled (a tool timeout, a cancelled run), a
  call that has not started never starts, and a running call frees its slot at once, so that
  one hung tool does not starve the others. Python cannot stop a thread: that thread runs on
  until the function returns, keeping what it holds (memory, sockets, locks), and its result
  is dropped. At most ``max_threads`` abandoned calls free their slots this way; past that
  they keep them until they return, so the pool never has more than ``2 * max_threads``
  threads. Give a tool that may hang its own deadline (a socket timeout, say) so that it
  returns.
- Context variables of the caller are visible to the function, as with ``asyncio.to_thread``.
- Results reach their loop through an inbox: an eventfd the loop watches and a deque, which
  costs a hop less than ``call_soon_threadsafe`` does (that stays for loops that cannot watch
  a descriptor). A thread accounts for its call before it posts the result, so the caller's
  next call finds it idle: calls made one after another keep one thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Generic, Literal, TypeVar

from bloge.core.errors import BlogeUsageError

T = TypeVar("T")

_WAITING: Final = "waiting"
_RUNNING: Final = "running"
_ABANDONED: Final = "abandoned"  # running, nobody waits for it, its slot already freed
_DONE: Final = "done"
_IDLE: Final = "idle"  # what _finish gives a thread that is to wait for its next job


def default_max_threads() -> int:
    """``min(32, cpu_count + 4)``: the default size of a :class:`WorkerPool`."""
    return min(32, (os.cpu_count() or 1) + 4)


class _Job(Generic[T]):
    __slots__ = ("args", "context", "fn", "future", "inbox", "state")

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.args = args
        self.inbox = _inbox(loop)
        self.future: asyncio.Future[T] = loop.create_future()
        self.context = contextvars.copy_context()
        self.state = _WAITING


class WorkerPool:
    """Daemon threads for sync functions awaited from event loops; see the module docstring."""

    __slots__ = ("__weakref__", "_abandoned", "_idle", "_jobs", "_lock", "_name", "_running",
                 "_waiting", "max_threads")

    def __init__(self, max_threads: int | None = None, *, name: str = "bloge-worker") -> None:
        if max_threads is None:
            max_threads = default_max_threads()
        if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
            raise BlogeUsageError(f"a WorkerPool needs max_threads >= 1, got {max_threads!r}")
        self.max_threads = max_threads
        self._name = name
        self._start_afresh()
        _POOLS.add(self)

    async def run(self, fn: Callable[..., T], /, *args: Any) -> T:
        """``fn(*args)`` on a pool thread; cancelling the awaiting task abandons the call."""
        job = _Job(fn, args, asyncio.get_running_loop())
        self._submit(job)
        try:
            return await job.future
        except asyncio.CancelledError:
            self._abandon(job)
            raise

    def __repr__(self) -> str:
        return (f"WorkerPool(max_threads={self.max_threads}, running={self._running}, "
                f"abandoned={self._abandoned}, waiting={len(self._waiting)})")

    # -- accounting (every state change happens under the lock)

    def _start_afresh(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job[Any]] = queue.SimpleQueue()
        self._waiting: deque[_Job[Any]] = deque()
        self._running = 0  # slots taken
        self._abandoned = 0  # threads busy with calls whose slot was freed
        self._idle = 0  # threads blocked on _jobs

    def _submit(self, job: _Job[Any]) -> None:
        with self._lock:
            if self._running >= self.max_threads:
                self._waiting.append(job)
                return
            spawn = self._take_slot(job)
        if spawn:
            self._spawn(job)

    def _take_slot(self, job: _Job[Any]) -> bool:
        """Give ``job`` a slot and an idle thread; ``True`` when a new thread must run it."""
        self._running += 1
        job.state = _RUNNING
        if self._idle:
            self._idle -= 1
            self._jobs.put(job)
            return False
        return True

    def _abandon(self, job: _Job[Any]) -> None:
        spawn: _Job[Any] | None = None
        with self._lock:
            if job.state == _WAITING:
                self._waiting.remove(job)
                job.state = _DONE
            elif job.state == _RUNNING and self._abandoned < self.max_threads:
                job.state = _ABANDONED
                self._running -= 1
                self._abandoned += 1
                if self._waiting:
                    following = self._waiting.popleft()
                    spawn = following if self._take_slot(following) else None
        if spawn is not None:
            self._spawn(spawn)

    def _finish(self, job: _Job[Any]) -> _Job[Any] | Literal["idle"] | None:
        """Account for ``job``'s end; then the next job for this thread: a waiting one,
        :data:`_IDLE` when the thread is to wait for one, or ``None`` when the pool has idle
        threads enough and this one should end."""
        with self._lock:
            if job.state == _ABANDONED:
                self._abandoned -= 1
            else:
                self._running -= 1
            job.state = _DONE
            if self._waiting and self._running < self.max_threads:
                following = self._waiting.popleft()
                self._running += 1
                following.state = _RUNNING
                return following
            if self._idle >= self.max_threads:
                return None
            self._idle += 1
        return _IDLE

    # -- threads

    def _spawn(self, job: _Job[Any]) -> None:
        try:
            threading.Thread(target=self._work, args=(job,), name=self._name, daemon=True).start()
        except RuntimeError as exc:  # no thread to be had (a process limit, say): fail the call
            with self._lock:
                self._running -= 1
                job.state = _DONE
            job.inbox.post(job.future, None, exc)

    def _work(self, job: _Job[Any] | Literal["idle"] | None) -> None:
        while job is not None:
            if job == _IDLE:
                # Rebound first: an idle thread holds nothing of its last call (the result,
                # the caller's loop and its inbox).
                job = self._jobs.get()
            job = self._serve(job)

    def _serve(self, job: _Job[Any]) -> _Job[Any] | Literal["idle"] | None:
        """Run ``job``, account for its end, post its outcome; then what :meth:`_finish` says
        this thread does next."""
        # Abandoned before this thread took it: never start it.
        outcome = None if job.state == _ABANDONED else _call(job)
        # The accounting comes first: the awaiting task, once it resumes, finds this thread
        # idle, and its next call wakes this thread instead of starting another.
        following = self._finish(job)
        if outcome is not None:
            job.inbox.post(job.future, *outcome)
        return following


def _call(job: _Job[Any]) -> tuple[Any, BaseException | None]:
    try:
        return job.context.run(job.fn, *job.args), None
    except BaseException as exc:  # noqa: BLE001 -- the awaiting task re-raises it (see _settle)
        return None, exc


# -- results back to the event loop


class _EventfdInbox:
    """Where pool threads leave finished calls for one event loop, which watches an eventfd.

    Cheaper than ``call_soon_threadsafe``, which makes a handle per call and wakes the loop
    through its self-pipe (one ``send``; then two ``recv``, the second raising
    ``BlockingIOError``): here a call is a deque entry, a wake-up one ``write`` and one
    ``read``, and one wake-up settles every call finished by then.
    """

    __slots__ = ("__weakref__", "_fd", "_finished")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._finished: deque[tuple[asyncio.Future[Any], Any, BaseException | None]] = deque()
        self._fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        # Closed when the last job and the loop have let go of the inbox: no thread can
        # write to the descriptor (or to another file given its number) after that.
        weakref.finalize(self, os.close, self._fd)
        # Registered from an empty context: the loop keeps the handle for its lifetime, and
        # with it the context it was made in.
        contextvars.Context().run(loop.add_reader, self._fd, self._settle_finished)

    def post(self, future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """From any thread: settle ``future`` on the loop. After the loop has closed, nobody
        takes the result: it is dropped with the loop."""
        self._finished.append((future, result, error))
        os.eventfd_write(self._fd, 1)

    def _settle_finished(self) -> None:
        os.eventfd_read(self._fd)  # first: a call posted from now on wakes the loop again
        while self._finished:
            _settle(*self._finished.popleft())


class _ThreadsafeInbox:
    """The same through ``call_soon_threadsafe``, for loops that cannot watch a descriptor
    (the proactor loop on Windows) and systems without eventfd."""

    __slots__ = ("_loop",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def post(self, future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """From any thread: settle ``future`` on the loop, unless the loop has closed."""
        # Not contextlib.suppress: that would be three Python calls more on every call.
        try:  # noqa: SIM105 -- see above
            self._loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # the loop has closed: nobody takes the result
            pass


_Inbox = _EventfdInbox | _ThreadsafeInbox
_INBOXES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = (
    weakref.WeakKeyDictionary())


def _inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    """The inbox of ``loop`` (made on its first call); only from the loop's own thread."""
    found = _INBOXES.get(loop)
    if found is None:
        found = _INBOXES[loop] = _new_inbox(loop)
    return found


def _new_inbox(loop: asyncio.AbstractEventLoop) -> _Inbox:
    if hasattr(os, "eventfd"):
        try:
            return _EventfdInbox(loop)
        except NotImplementedError:  # a loop that cannot watch descriptors
            pass
    return _ThreadsafeInbox(loop)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if isinstance(error, StopIteration):  # a future cannot carry StopIteration
        wrapped = RuntimeError("the operator raised StopIteration")
        wrapped.__cause__ = error
        error = wrapped
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # The child has none of the parent's threads: start every pool's accounting afresh.
    for pool in list(_POOLS):
        pool._start_afresh()


os.register_at_fork(after_in_child=_after_fork_in_child)

#: The pool sync operators run on unless their registry was given another.
DEFAULT_WORKERS: Final = WorkerPool()
