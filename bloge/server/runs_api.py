"""The runs API: start a run (whole or streamed), follow it again, read, cancel and resume
it, read a thread. With API keys, each run and thread is its creator's: another key is told
it does not exist (see :mod:`bloge.server.principals`). What is read back from the store
has its tool arguments and results masked (see :mod:`bloge.store.masked_records`); only the
request that runs the run hears its answer whole."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bloge.agent import (
    AgentInput,
    AgentLoopOperator,
    AgentRunError,
    RunPaused,
    StreamingAgentLoopOperator,
)
from bloge.agent.runtime import AgentEngine, check_priced
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.server.approvals_api import paused_response
from bloge.server.inputs import BadRequestError, ResumeBody, RunBody, json_body
from bloge.server.launch import (
    answer_whole,
    event_stream,
    failed_run_response,
    last_event_id,
    output_response,
    stream_events,
)
from bloge.server.principals import owner_filter, run_context
from bloge.server.state import LimitsChecker, ServerState, state_of
from bloge.server.tasks import RunCancelledError
from bloge.store import (
    Run,
    RunEvent,
    RunStatus,
    Store,
    follow,
    masked_event,
    masked_message,
    masked_run,
    run_moved_on,
)

#: How long ``POST /runs/{id}/cancel`` waits for the run to stop before it answers 202 (its
#: worker hears the cancel within a second: see bloge.store.cancels), and how often it looks.
CANCEL_SETTLE_SECONDS = 3.0
SETTLE_POLL_SECONDS = 0.05


async def start_run(request: Request) -> Response:
    """``POST /agents/{agent_id}/runs``: ``{"input", "thread_id"?, "max_turns"?, "stream"?,
    "on_disconnect"?}``; SSE with ``"stream": true`` or ``Accept: text/event-stream``."""
    state = state_of(request)
    agent_id = request.path_params["agent_id"]
    state.agents.definition(agent_id)
    body = await json_body(request, RunBody)
    agent_input = AgentInput.of(body.input)
    ctx = run_context(request)
    streamed = body.stream or "text/event-stream" in request.headers.get("accept", "")
    if streamed:
        streaming = state.agents.streaming(agent_id, max_turns=body.max_turns)
        thread_id = body.thread_id  # what the run keeps of the request's body, as it runs
        return await stream_events(
            state, agent_id, new_id(),
            lambda run_id, sink: streaming.arun(agent_input, ctx, on_chunk=sink,
                                                thread_id=thread_id, run_id=run_id),
            on_disconnect=body.on_disconnect or "cancel")
    operator = state.agents.whole(agent_id, max_turns=body.max_turns)
    try:
        output = await answer_whole(
            state, request, agent_id,
            lambda run_id: operator.aexecute(agent_input, ctx, thread_id=body.thread_id,
                                             run_id=run_id),
            on_disconnect=body.on_disconnect or "cancel")
    except (AgentRunError, RunCancelledError) as error:
        return await failed_run_response(state, error)
    except RunPaused as paused:
        return await paused_response(state, paused)
    return output_response(output) if output is not None else Response(status_code=499)


async def resume_run(request: Request) -> Response:
    """``POST /runs/{run_id}/resume``: ``{"max_turns"?, "budget"?, "stream"?,
    "on_disconnect"?}``."""
    state = state_of(request)
    run = await state.store.get_run(request.path_params["run_id"], owner=owner_filter(request))
    body = await json_body(request, ResumeBody, empty_ok=True)
    ctx = run_context(request)
    if body.stream:
        streaming = state.agents.streaming(run.agent_id, max_turns=body.max_turns,
                                           budget=body.budget)
        _check_limits(state, body.budget, streaming)
        return await stream_events(state, run.agent_id, run.id,
                                   lambda run_id, sink: streaming.arun_resumed(
                                       run_id, ctx, on_chunk=sink),
                                   on_disconnect=body.on_disconnect or "cancel",
                                   after=run.event_count)
    operator = state.agents.whole(run.agent_id, max_turns=body.max_turns, budget=body.budget)
    _check_limits(state, body.budget, operator)
    try:
        output = await answer_whole(state, request, run.agent_id,
                                    lambda _: operator.aresume_run(run.id, ctx),
                                    on_disconnect=body.on_disconnect or "cancel", run_id=run.id)
    except (AgentRunError, RunCancelledError) as error:
        return await failed_run_response(state, error)
    except RunPaused as paused:
        return await paused_response(state, paused)
    return output_response(output) if output is not None else Response(status_code=499)


def _check_limits(state: ServerState, budget: Mapping[str, Any] | None,
                  operator: AgentLoopOperator | StreamingAgentLoopOperator) -> None:
    """Refuse (400) the limits of a resume's ``budget`` the runs cannot keep (on Temporal,
    a thread's and ``time``; anywhere, ``usd`` on a model the resuming ``operator`` has no
    price for), as ``bloge runs resume --budget`` refuses them: before the run is taken
    back, so that it stays as it was."""
    if not budget:
        return
    try:
        if isinstance(state.cancels, LimitsChecker):
            state.cancels.check_limits(budget)
        _check_priced(budget, operator.engine)
    except BlogeUsageError as exc:
        raise BadRequestError(str(exc), param="budget") from None


def _check_priced(budget: Mapping[str, Any], engine: AgentEngine) -> None:
    """Refuse ``budget``'s ``usd`` limit (its thread's) on a model ``engine`` has no price
    for, naming it (``budget.usd: no price for model …``), as its run's ledger would."""
    thread = budget.get("thread")
    named = ("budget.usd" if budget.get("usd") is not None
             else "budget.thread.usd" if isinstance(thread, Mapping)
             and thread.get("usd") is not None else None)
    if named is None:
        return
    try:
        check_priced(engine.definition, engine.budgets, recorded=True)
    except BlogeUsageError as exc:
        raise BlogeUsageError(f"{named}: {exc}") from None


async def follow_run(request: Request) -> Response:
    """``GET /runs/{run_id}/stream``: the run's events after ``Last-Event-ID`` (or
    ``?after=``) — only what the client missed — live until the run ends; read back from
    the store, the ``done`` event's tool results masked as ``GET /runs/{id}`` masks them."""
    state = state_of(request)
    run = await state.store.get_run(request.path_params["run_id"], owner=owner_filter(request))
    events = follow(state.store, run.id, after=last_event_id(request))
    return event_stream(state, run.id, _masked_events(state.store, events))


async def _masked_events(store: Store, events: AsyncIterator[RunEvent]
                         ) -> AsyncIterator[RunEvent]:
    async for event in events:
        yield masked_event(store.redactor, event)


async def get_run(request: Request) -> Response:
    """``GET /runs/{run_id}``: the run's record (tool arguments and results masked), with the
    runs its sub-agents' calls started (``children``: each one's id, agent, status and exit
    reason)."""
    store = state_of(request).store
    run = await store.get_run(request.path_params["run_id"], owner=owner_filter(request))
    children = await store.child_runs(run.id)
    return JSONResponse({**masked_run(store.redactor, run),
                         "children": [child.summary() for child in children]})


async def cancel_run(request: Request) -> Response:
    """``POST /runs/{run_id}/cancel``: stops the run, at once when it runs in this process,
    within a second when another worker runs it (see :mod:`bloge.store.cancels`); the run's
    record once it stopped (200: ``cancelled``, or how it ended first), or still running
    (202) when it did not within :data:`CANCEL_SETTLE_SECONDS`."""
    state = state_of(request)
    run_id = request.path_params["run_id"]
    run = await state.cancels.cancel_run(run_id, owner=owner_filter(request))
    state.tasks.cancel(run_id)
    run = await stopped(state.store, run)
    return JSONResponse(masked_run(state.store.redactor, run),
                        status_code=202 if run.status is RunStatus.RUNNING else 200)


async def stopped(store: Store, run: Run) -> Run:
    """``run``, asked to stop, again once it is no longer running (or queued), or as it is
    after :data:`CANCEL_SETTLE_SECONDS` (an A2A task's cancel waits so too)."""
    return await run_moved_on(store, run, _going, within=CANCEL_SETTLE_SECONDS,
                              every=SETTLE_POLL_SECONDS)


def _going(run: Run) -> bool:
    return run.status in (RunStatus.RUNNING, RunStatus.QUEUED)


async def get_thread(request: Request) -> Response:
    """``GET /threads/{thread_id}``: the thread and its messages (tool arguments and results
    masked)."""
    store = state_of(request).store
    thread_id = request.path_params["thread_id"]
    owner = owner_filter(request)
    thread = await store.get_thread(thread_id, owner=owner)
    messages = await store.thread_messages(thread_id, owner=owner)
    return JSONResponse({**thread.to_dict(), "messages": [masked_message(store.redactor, m)
                                                      for m in messages]})


ROUTES = [
    Route("/agents/{agent_id}/runs", start_run, methods=["POST"]),
    Route("/runs/{run_id}", get_run, methods=["GET"]),
    Route("/runs/{run_id}/stream", follow_run, methods=["GET"]),
    Route("/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
    Route("/runs/{run_id}/resume", resume_run, methods=["POST"]),
    # A thread id is the client's own (POST /agents/{id}/runs takes any): "customer/42" too.
    Route("/threads/{thread_id:path}", get_thread, methods=["GET"]),
]
