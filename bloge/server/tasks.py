"""``RunTasks``: the runs a server runs, each in a task of its own, under one limit.

A run runs in its own task so that it can outlive the request that started it (a client that
disconnects with ``on_disconnect: continue``), be cancelled by id, and be ended at shutdown:
runs still going after the grace period are cancelled, which records them as cancelled with
their checkpoint, to be resumed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

Finished = Callable[[str, float, BaseException | None], None]
Failed = Callable[[str, Exception], Awaitable[None]]


class TooManyRunsError(Exception):
    """The server runs as many runs as it may."""


class RunCancelledError(Exception):
    """A run was cancelled by id or at shutdown; ``run_id`` names it."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} was cancelled")
        self.run_id = run_id


class RunRunningError(Exception):
    """Run ``run_id`` is running in this server already (a resume of it came meanwhile)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} is running; wait for it to end (GET /runs/{run_id}/"
                         f"stream follows it) or stop it (POST /runs/{run_id}/cancel)")
        self.run_id = run_id


class ServerStoppingError(Exception):
    """The server stopped (its shutdown grace is over) before run ``run_id`` answered; the run
    is cancelled with its checkpoint, to be resumed."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"the server is stopping and run {run_id} did not finish within its "
                         f"shutdown grace: it is cancelled with its checkpoint; "
                         f"POST /runs/{run_id}/resume continues it")
        self.run_id = run_id


def answered_shutdown(run_id: str) -> ServerStoppingError:
    """The error a request the server ended at shutdown answers with, instead of uvicorn's
    cancellation: that would be logged as an "Exception in ASGI application" traceback and
    answered with a text/plain 500. The cancellation is taken back (``uncancel``) because it
    is answered: the request's task then goes on to send the answer."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
    return ServerStoppingError(run_id)


def retrieved(task: asyncio.Task[Any]) -> None:
    """A run task's done callback, for a run whose failure is told another way (its stream's
    error event, its record): the task's exception counts as retrieved, never logged as
    unretrieved."""
    if not task.cancelled():
        task.exception()


class RunTasks:
    """At most ``limit`` runs at once; ``finished(agent_id, seconds, error)`` is told of each
    run's end (for metrics); ``failed(run_id, error)`` is awaited in the task of each run
    that fails, before the task ends with the error (the server logs why: see
    :func:`bloge.server.launch.log_failure`). One hook for every run, rather than a
    coroutine around each: every run in progress keeps each frame of its chain."""

    def __init__(self, limit: int, *, finished: Finished | None = None,
                 failed: Failed | None = None) -> None:
        self.limit = limit
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._cancelled: set[str] = set()
        self._finished = finished
        self._failed = failed

    def __len__(self) -> int:
        return len(self._tasks)

    def start(self, run_id: str, agent_id: str, work: Awaitable[T],
              *, timeout: float | None) -> asyncio.Task[T]:
        """Run ``work`` as run ``run_id``; :class:`TooManyRunsError` when at the limit,
        :class:`RunRunningError` when ``run_id`` runs here already (its task stays the one
        that cancelling ``run_id`` stops)."""
        refusal: Exception | None = None
        if run_id in self._tasks:
            refusal = RunRunningError(run_id)
        elif len(self._tasks) >= self.limit:
            refusal = TooManyRunsError()
        if refusal is not None:
            close = getattr(work, "close", None)
            if close is not None:
                close()
            raise refusal
        # Named by its run: its end is told by the task alone (no callback made for each run).
        task: asyncio.Task[T] = asyncio.create_task(
            self._run(run_id, agent_id, work, limit=timeout), name=run_id)
        self._tasks[run_id] = task
        task.add_done_callback(self._ended)
        return task

    def cancel(self, run_id: str) -> bool:
        """Cancel the run if it runs here; whether it did."""
        task = self._tasks.get(run_id)
        if task is None:
            return False
        self._cancelled.add(run_id)
        task.cancel()
        return True

    async def shutdown(self, grace: float) -> None:
        """Let the runs finish within ``grace`` seconds, then cancel the rest."""
        running = list(self._tasks.values())
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=grace)
        for run_id in list(self._tasks):
            self.cancel(run_id)
        await asyncio.gather(*late, return_exceptions=True)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        run_id = task.get_name()
        self._tasks.pop(run_id, None)
        self._cancelled.discard(run_id)

    async def _run(self, run_id: str, agent_id: str, work: Awaitable[T], *,
                   limit: float | None) -> T:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            async with asyncio.timeout(limit):
                return await work
        except asyncio.CancelledError as exc:
            error = exc
            if run_id in self._cancelled:  # ours: an ordinary end of the task, told as such
                raise RunCancelledError(run_id) from exc
            raise
        except Exception as exc:
            error = exc
            if self._failed is not None:
                await self._failed(run_id, exc)
            raise
        except BaseException as exc:
            error = exc
            raise
        finally:
            if self._finished is not None:
                self._finished(agent_id, time.perf_counter() - started, error)
