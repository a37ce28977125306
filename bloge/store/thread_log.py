"""``ThreadLog``: a thread's log as the runs writing to it in this process share it.

A run numbers the messages it appends to its thread's log itself, from where the log ended
when it took the thread. A sub-agent's run on its caller's thread (``thread = "parent"``,
see :mod:`bloge.agent.caller_thread`) writes to the same log while its caller holds the
thread, and several such children of one tool round write at once: they all number from
the one :class:`ThreadLog` of the run that holds the thread, so that no two messages get the
same number, and each knows the numbers of the messages the others wrote (a child started
from its caller's conversation refers to those messages instead of writing them again).

:data:`RUNNING` is the recorded run the current task runs (its id, and its thread's log),
what a sub-agent's call finds its caller's thread by. :func:`guest_runs` tells, reading a
thread's log, which of its messages such children wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bloge.llm import LlmMessage

if TYPE_CHECKING:
    from bloge.store.records import StoredMessage
    from bloge.store.store import Store


class ThreadLog:
    """The log of thread ``thread_id`` of ``store``, held by run ``holder``: ``next_seq``
    numbers its next message; ``seq_of`` maps the messages its runs know (by ``id``) to
    themselves and their numbers (keeping each message, so that no id is reused while the
    map holds it)."""

    __slots__ = ("holder", "next_seq", "seq_of", "store", "thread_id")

    def __init__(self, store: Store, thread_id: str, *, holder: str, next_seq: int) -> None:
        self.store = store
        self.thread_id = thread_id
        self.holder = holder
        self.next_seq = next_seq
        self.seq_of: dict[int, tuple[LlmMessage, int]] = {}

    def __repr__(self) -> str:
        return (f"ThreadLog({self.thread_id!r}, holder={self.holder!r}, "
                f"next_seq={self.next_seq})")

    def take(self) -> int:
        """The number of the next message appended to the log."""
        seq = self.next_seq
        self.next_seq += 1
        return seq


@dataclass(frozen=True, slots=True)
class RunningRun:
    """Run ``run_id``, writing to ``log``."""

    run_id: str
    log: ThreadLog


#: The recorded run the current task runs, ``None`` outside one.
RUNNING: ContextVar[RunningRun | None] = ContextVar("bloge_running_run", default=None)


async def guest_runs(store: Store, messages: Sequence[StoredMessage]) -> dict[str, str]:
    """The agents, by run id, of the sub-agents' runs that wrote some of ``messages`` (of one
    thread's log) on their caller's thread: those whose caller wrote some of them too (a
    caller writes the message that asks its sub-agent before the sub-agent starts)."""
    writers = {m.run_id for m in messages if m.run_id is not None}
    guests: dict[str, str] = {}
    for run_id in sorted(writers):
        run = await store.get_run(run_id)
        if run.parent_run_id in writers:
            guests[run.id] = run.agent_id
    return guests
