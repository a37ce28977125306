"""Following a run's events: what a re-joined stream reads, in this process or another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from bloge.store.records import Run, RunEvent, RunStatus
from bloge.store.store import Store

_END = ("done", "error")

#: How often a run that another process runs is read again, in seconds.
POLL_SECONDS = 0.25


async def follow(store: Store, run_id: str, *, after: int = 0,
                 poll: float = POLL_SECONDS) -> AsyncGenerator[RunEvent, None]:
    """The run's events numbered above ``after``, in order, then each new one until the run
    ends (with its ``done`` or ``error`` event) or pauses. A run live in this event loop is
    followed as it happens; one that another process or another loop runs is read from the
    store every ``poll`` seconds; one that is over (or interrupted) is read once. A run that
    ended without its ``done`` or ``error`` event — its worker died — ends with an ``error``
    event saying so and how to resume it, and a paused run with a ``paused`` event saying on
    what it waits (:func:`paused_now`), both numbered 0: they are no stored events."""
    live = store.live
    if live.is_live_here(run_id):
        first = live.first_seq(run_id)
        while first is None or first > after + 1:
            # Its earlier events are in the store: a resumed run's, or those let go of here
            # (which more may join while this reads, until it reads none more).
            for event in await store.run_events(run_id, after=after):
                if first is not None and event.seq >= first:
                    break
                after = event.seq
                yield event
            now = live.first_seq(run_id)
            if now == first or not live.is_live_here(run_id):
                break
            first = now
        if live.is_live_here(run_id):  # nothing between this look and the watch's start
            last = ""
            async for event in live.watch(run_id, after=after):
                last = event.type
                yield event
            if last not in _END:  # it paused, or went on elsewhere: its record says
                run = await store.get_run(run_id)
                if run.status.paused:
                    yield paused_now(run, at=store.clock())
            return
    last = ""
    while True:
        run = await store.get_run(run_id)
        for event in await store.run_events(run_id, after=after):
            after, last = event.seq, event.type
            yield event
        if run.status.paused:
            yield paused_now(run, at=store.clock())
            return
        if run.status not in (RunStatus.RUNNING, RunStatus.QUEUED):
            if not last and run.event_count:  # nothing new: what do its stored events end with?
                tail = await store.run_events(run_id, after=run.event_count - 1)
                last = tail[-1].type if tail else ""
            if last not in _END:
                yield ended_unseen(run, at=store.clock())
            return
        await asyncio.sleep(poll)


def paused_now(run: Run, *, at: float) -> RunEvent:
    """The ``paused`` event that ends the stream of the paused ``run``: its status, the
    calls it waits on (``call_ids``; its sub-agents' too) and what goes on with it
    (numbered 0, as :func:`ended_unseen`'s)."""
    waiting = [call.call_id for call in run.pending_approvals]
    rejoin = f"then GET /runs/{run.id}/stream re-joins it"
    if waiting:
        said = (f"run {run.id} is {run.status.value.replace('_', ' ')}, waiting on "
                f"{', '.join(map(repr, waiting))}: decide each with POST "
                f"/runs/{run.id}/approvals/{{call_id}} or post results to POST "
                f"/runs/{run.id}/tool-results; {rejoin}")
    else:  # answered without continuing it (bloge approvals approve --no-continue)
        said = (f"run {run.id} is paused, its calls all answered: a server continues it "
                f"within a minute, or POST /runs/{run.id}/resume does; {rejoin}")
    return RunEvent(run.id, 0, "paused", at, {"run_id": run.id, "status": run.status.value,
                                              "call_ids": waiting, "message": said})


def ended_unseen(run: Run, *, at: float) -> RunEvent:
    """The ``error`` event of ``run``, which ended without one of its own (numbered 0: no
    stored event has that number, so a client's ``Last-Event-ID`` stays where it was)."""
    resume = f"resume it with POST /runs/{run.id}/resume (or bloge runs resume {run.id})"
    kind = run.error.type if run.error is not None else None
    if run.status is RunStatus.INTERRUPTED:
        kind = "RunInterruptedError"
        why = (f"run {run.id} was interrupted: its worker stopped before the run finished; "
               f"{resume}")
    elif run.error is not None:
        why = run.error.message
    else:
        why = f"run {run.id} ended {run.status.value}; {resume}"
    return RunEvent(run.id, 0, "error", at, {
        "error_type": kind, "error_message": why,
        "exit_reason": run.exit_reason or run.status.value})
