"""What the chat page's console reads: the principal's threads and a thread's conversation,
a run's timeline (live, re-joined with ``Last-Event-ID``), and the calls waiting for a
decision across the principal's runs.

Everything is scoped as the runs API is (:mod:`bloge.server.principals`): with API keys, a
key sees its own threads, runs and calls only; another's are not found. Tool arguments and
results are masked as the journal masks them (the store's redactor, the one its run events
pass), so that the page shows what ``bloge runs show`` prints and no more.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bloge.server.inputs import BadRequestError
from bloge.server.launch import last_event_id
from bloge.server.principals import owner_filter, principal_of
from bloge.server.sse import EventStream, frame
from bloge.server.state import state_of
from bloge.store import (
    Run,
    RunEvent,
    follow,
    masked_message,
    pending_approvals,
    run_timeline,
)

#: At most this many threads in one listing (``?limit=``).
MAX_THREADS = 200
#: A thread's title is its first user message among its first this many (a system prompt
#: may come first).
TITLE_SEARCH = 3
#: The events that end a run's timeline stream (``paused``: the run waits on calls).
_END = frozenset({"done", "error", "paused"})


async def list_threads(request: Request) -> Response:
    """``GET /threads?q=&limit=&evals=``: the principal's threads, the most recently active
    first, each with its first user message as its ``title``; ``q``: only those whose id or
    a message holds that text; those of evals' cases only with ``evals=true``."""
    store = state_of(request).store
    limit = _limit(request.query_params.get("limit", "50"))
    query = request.query_params.get("q", "").strip() or None
    evals = _flag(request.query_params.get("evals", "false"), param="evals")
    threads = await store.list_threads(limit=limit, owner=owner_filter(request),
                                       containing=query, evals=evals)
    listed = []
    for thread in threads:
        first = await store.thread_messages(thread.id, limit=TITLE_SEARCH)
        title = next((m.message.content for m in first if m.message.role == "user"), "")
        listed.append({**thread.to_dict(), "title": title})
    return JSONResponse({"threads": listed})


def _flag(value: str, *, param: str) -> bool:
    if value not in ("true", "false"):
        raise BadRequestError(f"{param} must be true or false, got {value!r}", param=param)
    return value == "true"


def _limit(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_THREADS:
        raise BadRequestError(f"limit must be a whole number from 1 to {MAX_THREADS}, got "
                              f"{value!r}", param="limit")
    return int(value)


async def thread_messages(request: Request) -> Response:
    """``GET /threads/{thread_id}/messages``: the thread, its messages (tool arguments and
    results masked) and its runs, the newest first (how each ended, its typed output)."""
    store = state_of(request).store
    thread_id = request.path_params["thread_id"]
    owner = owner_filter(request)
    thread = await store.get_thread(thread_id, owner=owner)
    messages = await store.thread_messages(thread_id, owner=owner)
    runs = await store.list_runs(thread_id=thread_id, limit=100)
    return JSONResponse({"thread": thread.to_dict(),
                         "messages": [masked_message(store.redactor, m) for m in messages],
                         "runs": [run_summary(run) for run in runs]})


def run_summary(run: Run) -> dict[str, Any]:
    """What the page shows of a run beside its messages: how it ended and its typed output
    (the whole output, tool results included, stays at ``GET /runs/{id}``), and its caller's
    run (a sub-agent's, whose messages on its caller's thread the page leaves out)."""
    output = run.output or {}
    return {"id": run.id, "agent_id": run.agent_id, "parent_run_id": run.parent_run_id,
            "status": run.status.value,
            "exit_reason": run.exit_reason,
            "error": None if run.error is None else run.error.to_dict(),
            "output": output.get("output"), "usage": run.usage.to_dict(), "turns": run.turns,
            "created_at": run.created_at, "finished_at": run.finished_at,
            "pending": len(run.pending_approvals)}


async def run_events(request: Request) -> Response:
    """``GET /runs/{run_id}/events``: the run's timeline — the events ``bloge runs show``
    prints (turns, model calls, tool calls, guards, approvals, the end), each with its
    number, label, turn, one-line detail and the event itself. JSON (``{"run", "events"}``,
    as they are now); with ``Accept: text/event-stream``, SSE that follows the run live
    (``event: entry``, then ``event: end``: the run's ``done`` or ``error``, or ``paused``
    while it waits on calls), from after ``Last-Event-ID`` (or ``?after=``)."""
    state = state_of(request)
    run = await state.store.get_run(request.path_params["run_id"], owner=owner_filter(request))
    after = last_event_id(request)
    if "text/event-stream" in request.headers.get("accept", ""):
        return EventStream(_timeline_frames(follow(state.store, run.id, after=after)),
                           keepalive=state.config.keepalive,
                           send_timeout=state.config.send_timeout)
    events = await state.store.run_events(run.id, after=after)
    return JSONResponse({"run": run_summary(run), "events": timeline_entries(run.id, events)})


def timeline_entries(run_id: str, events: Iterable[RunEvent]) -> list[dict[str, Any]]:
    """The timeline entries of ``events`` (the stream's tokens and tool chunks left out) as
    JSON data."""
    events = list(events)
    at = {event.seq: event.at for event in events}
    return [{"seq": entry.seq, "at": at.get(entry.seq or 0), "label": entry.label,
             "turn": entry.turn, "detail": entry.detail, "event": _event_fields(entry.event)}
            for entry in run_timeline(run_id, events)]


def _event_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event's own fields (what it says beyond its place, which the entry gives)."""
    return {key: value for key, value in event.items()
            if key not in ("event", "seq", "execution_id", "timestamp")}


async def _timeline_frames(events: AsyncIterator[RunEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        if event.type in _END:
            ended: dict[str, Any] = {"type": event.type}
            if event.type == "error":
                ended.update({key: event.body.get(key)
                              for key in ("error_type", "error_message", "exit_reason")})
            elif event.type == "paused":
                ended.update({key: event.body.get(key)
                              for key in ("status", "call_ids", "message")})
            yield frame(json.dumps(ended, ensure_ascii=False), event="end",
                        event_id=event.seq or None)
            return
        for entry in timeline_entries(event.run_id, [event]):
            yield frame(json.dumps(entry, ensure_ascii=False), event="entry",
                        event_id=event.seq)


async def list_approvals(request: Request) -> Response:
    """``GET /approvals``: the calls waiting now across the principal's runs (approvals and
    external results), oldest first, with their masked arguments and hash; and who asks and
    whether four eyes hold (then a run's own principal may not decide its calls)."""
    state = state_of(request)
    calls = await pending_approvals(state.store, owner=owner_filter(request))
    who = principal_of(request)
    return JSONResponse({"approvals": [call.to_dict() for call in calls],
                         "principal": None if who is None else who.name,
                         "four_eyes": state.config.four_eyes})


# Before the runs API's /threads/{thread_id:path}, which would take ".../messages" as an id.
ROUTES = [
    Route("/threads", list_threads, methods=["GET"]),
    Route("/threads/{thread_id:path}/messages", thread_messages, methods=["GET"]),
    Route("/runs/{run_id}/events", run_events, methods=["GET"]),
    Route("/approvals", list_approvals, methods=["GET"]),
]
