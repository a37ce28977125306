"""Starting a run for a request: in its own task, answered whole or streamed as events, what
happens when the client goes away, and what a client is told of a run that failed."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bloge.agent import (
    AgentOutput,
    AgentRunError,
    AgentStreamChunk,
    BudgetExceededError,
    GuardrailTrippedError,
)
from bloge.agent.runtime import ChunkSink
from bloge.core.ids import new_id
from bloge.server.inputs import BadRequestError
from bloge.server.sse import EventStream, frame
from bloge.server.state import ServerState
from bloge.server.tasks import (
    RunCancelledError,
    ServerStoppingError,
    answered_shutdown,
    retrieved,
)
from bloge.store import RunEvent, Store, StoreError, follow

_log = logging.getLogger("bloge.server")

#: The status of a run a guard stopped, on ``/v1`` (OpenAI's status for a request its
#: policies refuse, with code ``guardrail_tripped``; clients do not retry it) …
GUARDRAIL_STATUS = 400
#: … and on the runs API, whose body is the run's record (its ``error.guardrail`` names the
#: guard and its verdict).
GUARDRAIL_RUN_STATUS = 422
#: The events a run's stream shows; the listener callbacks are the journal's.
STREAMED = frozenset({"token", "tool_start", "tool_end", "handoff", "done", "error",
                      "approval_required", "tool_results_required", "subagent",
                      "subagent_paused", "paused"})

Work = Callable[[str], Awaitable[AgentOutput]]
"""Given the run id, the run (whole)."""
StreamWork = Callable[[str, ChunkSink], Awaitable[AgentOutput]]
"""Given the run id and where its chunks go, the run (streamed)."""


async def answer_whole(state: ServerState, request: Request, agent_id: str, work: Work, *,
                       on_disconnect: str = "cancel",
                       run_id: str | None = None) -> AgentOutput | None:
    """Run ``work`` as a new run (or as the recorded run ``run_id``, resumed) and wait for
    its output; ``None`` when the client left (the run is then cancelled, or goes on with
    ``on_disconnect="continue"``)."""
    run_id = run_id or new_id()
    task = state.tasks.start(run_id, agent_id, work(run_id),
                             timeout=state.config.request_timeout)
    gone = asyncio.create_task(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the server ended the request (its shutdown grace is over)
        if on_disconnect == "cancel":
            task.cancel()
        raise answered_shutdown(run_id) from None
    finally:
        gone.cancel()
    if not task.done():
        if on_disconnect == "cancel":
            task.cancel()
        return None
    return _output(task, run_id)


async def stream_events(state: ServerState, agent_id: str, run_id: str, work: StreamWork, *,
                        on_disconnect: str = "cancel", after: int = 0) -> Response:
    """Start the run and answer with its events numbered above ``after`` (a resumed run's
    earlier events are not its stream) as SSE, each with its run event number as ``id:``.
    A run that fails before its first event is answered with its error instead."""
    task, events = start_streamed(state, agent_id, run_id, work, after=after)
    try:
        first = await anext(events, None)
    except asyncio.CancelledError:  # the server ended the request (its shutdown grace is over)
        if on_disconnect == "cancel":
            task.cancel()
        raise answered_shutdown(run_id) from None
    if first is None:
        await asyncio.wait({task})
        _output(task, run_id)  # raises the run's failure, for the caller to answer with
        raise AssertionError("a run that ended without an event failed")
    def cancel() -> None:
        state.tasks.cancel(run_id)

    response = event_stream(state, run_id, events, first=first,
                            on_disconnect=cancel if on_disconnect == "cancel" else None)
    response.raw_headers.append((b"bloge-run-id", run_id.encode()))
    return response


class RunTimedOutError(TimeoutError):
    """Run ``run_id`` took longer than the server's request time limit and was cancelled."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} took longer than the server's request time limit")
        self.run_id = run_id


async def log_failure(store: Store, run_id: str, error: Exception) -> None:
    """The server's :class:`~bloge.server.tasks.RunTasks` ``failed`` hook: a run that failed
    is told in the server's log (one warning: the run and why, as :func:`failed_because`
    tells it), beside the access line of its request."""
    if not isinstance(error, AgentRunError):
        return
    try:
        why = await failed_because(store, run_id, error)
    except StoreError:  # the store is down: the run's own failure still goes to its client
        why = error.exit_reason
    _log.warning("run %s failed: %s", run_id, why)


def _output(task: asyncio.Task[AgentOutput], run_id: str) -> AgentOutput:
    """The finished run's output, or its failure. A run this server did not cancel that ended
    cancelled was asked to stop through the run store (``bloge runs cancel``, another
    worker's ``POST /runs/{id}/cancel``): a :class:`RunCancelledError` too, answered with the
    run's record as a run cancelled here is. A run past the time limit is a
    :class:`RunTimedOutError` naming it."""
    if task.cancelled():
        raise RunCancelledError(run_id)
    error = task.exception()
    if isinstance(error, TimeoutError) and not isinstance(error, RunTimedOutError):
        raise RunTimedOutError(run_id) from error
    return task.result()


def start_streamed(state: ServerState, agent_id: str, run_id: str, work: StreamWork, *,
                   after: int = 0
                   ) -> tuple[asyncio.Task[AgentOutput], AsyncGenerator[RunEvent, None]]:
    """Start the streamed run ``run_id`` in its task; the task, and the run's events numbered
    above ``after`` (followed before the task runs, so none is missed: the task runs from the
    next await on). A run refused a task touches nothing of a run ``run_id`` running here."""
    task = state.tasks.start(run_id, agent_id, work(run_id, discard),
                             timeout=state.config.request_timeout)
    state.store.live.started(run_id)
    # Its failure is told in the stream (an error event) or by the caller: never unretrieved.
    task.add_done_callback(retrieved)
    return task, follow(state.store, run_id, after=after)


def event_stream(state: ServerState, run_id: str, events: AsyncIterator[RunEvent], *,
                 first: RunEvent | None = None,
                 on_disconnect: Callable[[], None] | None = None) -> EventStream:
    """The SSE response showing ``events`` of run ``run_id`` (after ``first``, when one was
    taken from them already); when the server stops first, the stream ends with an ``error``
    event (``exit_reason: cancelled``) saying so."""
    return EventStream(frames(events, first=first), keepalive=state.config.keepalive,
                       send_timeout=state.config.send_timeout, on_disconnect=on_disconnect,
                       closing=functools.partial(_stopped, run_id))


def _stopped(run_id: str) -> bytes:
    """The ``error`` event that ends the stream of run ``run_id`` when the server stops."""
    stopping = {"error_type": "ServerStoppingError",
                "error_message": str(ServerStoppingError(run_id)), "exit_reason": "cancelled"}
    return frame(json.dumps(stopping), event="error")


async def frames(events: AsyncIterator[RunEvent], *,
                 first: RunEvent | None = None) -> AsyncIterator[bytes]:
    """``event: token|tool_start|tool_end|handoff|done|error|subagent`` (and a paused run's
    ``approval_required``, ``tool_results_required``, ``subagent_paused`` — a call waiting on
    a sub-agent's paused run, whose calls follow it with their ``subagent_run_id`` — and last
    ``paused``, saying on what it waits), ``id:`` the run's event number
    (``subagent``: a sub-agent's ``token``, ``tool_start`` or ``tool_end`` as ``event`` and
    ``body``, under the caller's ``call_id``, with the child's ``run_id``).

    The number is the one the store gives the event, which the run's listener records
    (``on_agent_turn_started``, ``on_agent_llm_called``, …) share but the stream does not
    show: ids start above 1 (event 1 is the first turn's start) and skip. On purpose:
    the stored number is what every worker reads back (``follow(after=)``), so a
    ``Last-Event-ID`` means the same event to any of them, also for runs stored long ago;
    numbers of the stream's own would have to be rebuilt by counting, and would change what
    a client holding an older id resumes from. An event numbered 0 is no stored event (the
    ``error`` that ends the stream of a run whose worker died): it has no ``id:``, and a
    client's ``Last-Event-ID`` stays at the event before it; so is a paused run's
    ``paused``.

    ``first``, an event taken from ``events`` already, comes first."""
    if first is not None and first.type in STREAMED:
        yield _frame_of(first)
    async for event in events:
        if event.type in STREAMED:
            yield _frame_of(event)


def _frame_of(event: RunEvent) -> bytes:
    return frame(json.dumps(event.body, ensure_ascii=False), event=event.type,
                 event_id=event.seq or None)


async def discard(chunk: AgentStreamChunk) -> None:
    """Where a served run's chunks go: nowhere, for they are its recorded events, which its
    streams follow (``store.live``)."""


def output_response(output: AgentOutput) -> JSONResponse:
    return JSONResponse({"status": "succeeded", **output.to_dict()})


async def failed_run_response(state: ServerState,
                              error: AgentRunError | RunCancelledError) -> JSONResponse:
    """A run that ended without an answer, as its record (status, exit reason, error)."""
    if error.run_id is None:  # only a run without a store has no id: the server has one
        raise error
    run = await state.store.get_run(error.run_id)
    # A guard's refusal is the client's to hear as an error; other failures are the run's
    # record, as it ended.
    status = GUARDRAIL_RUN_STATUS if isinstance(error, GuardrailTrippedError) else 200
    return JSONResponse(run.to_dict(), status_code=status)


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def last_event_id(request: Request) -> int:
    """Where a re-joining client left off: ``Last-Event-ID`` (what ``EventSource`` sends),
    else ``?after=``; 0 for the whole stream."""
    value: Any = request.headers.get("last-event-id") or request.query_params.get("after") or 0
    try:
        return max(0, int(value))
    except ValueError:
        raise BadRequestError(f"Last-Event-ID must be an event number, got {value!r}",
                              param="Last-Event-ID") from None


@dataclass(frozen=True, slots=True)
class RunFailure:
    """A run that ended without an answer, as its client is told of it."""

    status: int
    message: str
    code: str


async def run_failure(state: ServerState, run_id: str, error: BaseException) -> RunFailure:
    """Why run ``run_id`` ended with ``error``, naming the run; a failed run's reason as
    :func:`failed_because` tells it."""
    match error:
        case GuardrailTrippedError():
            why = await failed_because(state.store, run_id, error)
            return RunFailure(GUARDRAIL_STATUS, f"run {run_id} was stopped by a guard: {why}",
                              "guardrail_tripped")
        case BudgetExceededError():
            return budget_failure(run_id, error)
        case AgentRunError():
            why = await failed_because(state.store, run_id, error)
            return RunFailure(500, f"run {run_id} failed: {why}", "run_failed")
        case RunCancelledError():
            return RunFailure(500, str(error), "run_cancelled")
        case TimeoutError():
            return RunFailure(504, f"run {run_id} took longer than the server's request time "
                              f"limit ({state.config.request_timeout:g} s) and was cancelled; "
                              f"resume it with POST /runs/{run_id}/resume", "timeout")
    _log.error("run %s failed", run_id, exc_info=error)
    return RunFailure(500, f"run {run_id} failed: the server failed: {type(error).__name__}",
                      "server_error")


def budget_failure(run_id: str, error: BudgetExceededError) -> RunFailure:
    """A run a budget stopped: 402 (a retry alone cannot help, and the SDKs retry a 429 by
    themselves), naming the limit and how to resume the run with a higher one."""
    if error.scope == "key":
        how = ("an API key's budget is raised in bloge.budgets.keys, or renews with the next "
               "period")
    else:
        limit = f'{{"{error.limit_name}": <higher>}}'
        body = limit if error.scope == "run" else f'{{"thread": {limit}}}'
        how = f'POST /runs/{run_id}/resume with {{"budget": {body}}}'
    return RunFailure(402, f"run {run_id}: {error} ({how})", "budget_exceeded")


async def failed_because(store: Store, run_id: str, error: AgentRunError) -> str:
    """Why run ``run_id`` failed, as its record says: with secrets taken out, which the
    error itself may quote (a provider's answer, a tool's message)."""
    recorded = (await store.get_run(run_id)).error
    return recorded.message if recorded is not None else error.exit_reason
