"""The store's errors: every one names the store (its URL, password masked) and what to do."""

from __future__ import annotations

import math

from bloge.core.errors import BlogeError


class StoreError(BlogeError):
    """The run store cannot do what was asked: it cannot be opened or reached, its file is not
    a bloge store, its schema is newer than this bloge, a disk is full.

    ``store`` is the store's URL with any password masked; ``reason`` the message without it
    (what a server tells its clients, who are not told where its store is).
    """

    def __init__(self, message: str, *, store: str) -> None:
        self.store = store
        self.reason = message
        super().__init__(f"run store {store}: {message}")


class StoreNotFoundError(StoreError, LookupError):
    """No thread or run has the id asked for."""


class ThreadBusyError(StoreError):
    """A run is already running on the thread; ``run_id`` names it.

    Two runs on one thread at once would interleave their messages, so the second is refused
    until the first ends, or until its worker's lease expires (a worker that died).
    """

    def __init__(self, thread_id: str, run_id: str, *, store: str,
                 lease_left: float | None = None, paused: str | None = None,
                 answered: bool = False) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        if paused is not None:  # the run holds its thread while it waits
            cancel = f"or cancel it (bloge runs cancel {run_id})"
            if answered:  # decided with --no-continue: nothing waits but its continuation
                message = (f"thread {thread_id!r} is busy: run {run_id!r} on it is paused, "
                           "its calls all answered; continue it with bloge runs resume "
                           f"{run_id} (a running bloge serve continues it within a minute) "
                           f"{cancel}")
            else:
                message = (f"thread {thread_id!r} is busy: run {run_id!r} on it is "
                           f"{paused.replace('_', ' ')}; decide its calls (bloge approvals "
                           f"list --run {run_id}) {cancel}")
            super().__init__(message, store=store)
            return
        # Known when the run asked for is itself the one running: its worker may have died.
        died = ("" if lease_left is None else
                f"; if its worker has stopped, it can be resumed when its lease ends in "
                f"{max(1, math.ceil(lease_left))} s")
        super().__init__(f"thread {thread_id!r} is busy: run {run_id!r} is running on it; "
                         "wait for it to finish or cancel it (bloge runs cancel "
                         f"{run_id}){died}", store=store)
