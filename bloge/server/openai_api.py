"""The OpenAI-compatible API, for OpenAI's SDKs and the tools built on them: ``GET /v1/models``
(the agents, as models), ``GET /v1/models/{id}``, and ``POST /v1/chat/completions``, a run of
the agent that ``model`` names, its tools run here (what a request may ask:
:mod:`bloge.server.openai_wire`).

Every completion is a new recorded run on a thread of its own (the messages carry the
conversation); its id is ``chatcmpl-<run id>``, the run's record is ``GET /runs/<run id>``.
A request's own ``tools`` are the client's: a completion whose model calls them ends with
the calls, its run paused, and the request that sends their results continues that run
(:mod:`bloge.server.openai_rounds`), under the same id. A stream is ``data: {chunk}`` lines
and ``data: [DONE]``, the text of the run's tokens (the agent's own tool calls are not
shown), then the client's tool calls it waits on, if any. It starts with the run's first
token, or once the run has worked ``keepalive`` seconds without one (keep-alive comments
follow): a run that fails before is answered with an error and its real status, one that
fails after with a ``data: {"error": …}`` line, then ``[DONE]``. A client that goes away
cancels its run. A failed run is not retried by the SDK (``x-should-retry: false``): its
tools may have acted.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import replace

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bloge.agent import AgentOutput, AgentRunError, AgentUsage, MaxTurnsExceededError, RunPaused
from bloge.core.context import OperatorContext
from bloge.server import openai_rounds as rounds
from bloge.server import openai_wire as wire
from bloge.server.agents import UnknownAgentError
from bloge.server.inputs import json_body
from bloge.server.launch import RunFailure, answer_whole, run_failure, start_streamed
from bloge.server.principals import principal_of, run_context
from bloge.server.problems import error_body, problem
from bloge.server.response_format import with_own_schema
from bloge.server.sse import EventStream
from bloge.server.state import ServerState, state_of
from bloge.server.tasks import RunCancelledError, ServerStoppingError, answered_shutdown
from bloge.store import RunEvent

#: When the served agents were loaded: the ``created`` of every model.
LOADED = int(time.time())
#: The run events a completion stream is made of.
SHOWN = frozenset({"token", "done", "error"})
DONE = b"data: [DONE]\n\n"
NO_RETRY = {"x-should-retry": "false"}

First = RunEvent | None | asyncio.Future[RunEvent | None]
"""A stream's first shown event (``None``: the run's events ended without one), or the task
still taking it from them when the stream starts without it (after ``keepalive`` seconds)."""


async def list_models(request: Request) -> Response:
    """``GET /v1/models``: every agent, as a model."""
    return JSONResponse(wire.model_list(state_of(request).agents.ids(), created=LOADED))


async def get_model(request: Request) -> Response:
    """``GET /v1/models/{model_id}``: the agent, as a model."""
    model_id = request.path_params["model_id"]
    missing = _missing(state_of(request), model_id)
    return missing or JSONResponse(wire.model_card(model_id, created=LOADED))


async def chat_completions(request: Request) -> Response:
    """``POST /v1/chat/completions``: a ``chat.completion``, or its chunks with ``stream``."""
    state = state_of(request)
    chat = wire.chat_request(await json_body(request, wire.CompletionBody))
    missing = _missing(state, chat.agent_id)
    if missing is not None:
        return missing
    definition = state.agents.definition(chat.agent_id)
    chat = replace(chat, sampling=with_own_schema(chat.sampling, definition.output))
    principal = principal_of(request)
    owner = None if principal is None else principal.name
    try:
        run = await rounds.completion_run(state.store, definition, chat, principal=owner)
        return await _completion(state, request, chat, run, owner)
    except rounds.ToolRoundError as error:
        return problem(error.message, status=error.status, param=error.param, code=error.code)


async def _completion(state: ServerState, request: Request, chat: wire.ChatRequest,
                      run: rounds.CompletionRun, owner: str | None) -> Response:
    created = int(time.time())
    ctx = run_context(request)
    if chat.stream:
        return _streamed(state, chat, run, created, ctx, owner)
    operator = state.agents.whole(chat.agent_id, sampling=run.changes)
    try:
        output = await answer_whole(
            state, request, chat.agent_id,
            (lambda resumed: _continued(state, run, owner,
                                        lambda: operator.aresume_run(resumed, ctx)))
            if run.resumed else
            (lambda new: operator.aexecute(chat.input, ctx, run_id=new, tools=run.tools)),
            run_id=run.run_id)
    except MaxTurnsExceededError as error:
        return JSONResponse(wire.completion(_completion_id(run.run_id), chat.agent_id,
                                            created, _own(wire.out_of_turns(error), run.usage)))
    except RunPaused as paused:
        said = rounds.paused_answer(paused, since=run.usage)
        if isinstance(said, RunFailure):
            return _failure_response(said)
        return JSONResponse(wire.completion(_completion_id(run.run_id), chat.agent_id,
                                            created, said))
    except (AgentRunError, RunCancelledError, TimeoutError) as error:
        return _failure_response(await run_failure(state, run.run_id, error))
    if output is None:
        return Response(status_code=499)  # the client left; its run was cancelled
    return JSONResponse(wire.completion(_completion_id(run.run_id), chat.agent_id, created,
                                        _own(wire.answer(output), run.usage)))


async def _continued(state: ServerState, run: rounds.CompletionRun, owner: str | None,
                     resume: Callable[[], Awaitable[AgentOutput]]) -> AgentOutput:
    """Post the client's results, then resume the run: in the run's own task, so that a run
    refused a task keeps its calls waiting (the client's retry finds it)."""
    await rounds.post_results(state.store, run, principal=owner)
    return await resume()


def _own(said: wire.Answer, since: AgentUsage) -> wire.Answer:
    """``said`` with the usage of this completion's model calls only (``since``: the run's
    before it; a continued run's earlier calls were told in its earlier completions)."""
    return replace(said, usage=rounds.usage_since(said.usage, since))


def _streamed(state: ServerState, chat: wire.ChatRequest, run: rounds.CompletionRun,
              created: int, ctx: OperatorContext | None, owner: str | None) -> Response:
    streaming = state.agents.streaming(chat.agent_id, sampling=run.changes)
    run_id = run.run_id
    # What the new run keeps of the request as it runs: not the whole ChatRequest.
    agent_input, tools = chat.input, run.tools
    task, events = start_streamed(
        state, chat.agent_id, run_id,
        (lambda resumed, sink: _continued(
            state, run, owner, lambda: streaming.arun_resumed(resumed, ctx, on_chunk=sink)))
        if run.resumed else
        (lambda new, sink: streaming.arun(agent_input, ctx, on_chunk=sink, run_id=new,
                                          tools=tools)),
        after=run.events)
    writer = wire.ChunkWriter(_completion_id(run_id), chat.agent_id, created,
                              include_usage=chat.include_usage)
    # The stream keeps of the run what its ending needs, not the CompletionRun (its mappings).
    return _Opening(functools.partial(_opened, state, run_id, run.usage, writer, events, task))


class _Opening(Response):
    """A completion's response, decided as it is sent (:func:`_opened`): the handler has
    returned by then, and its frames, which would keep the request's body and the
    completion's run, are let go of while the run works towards its first token."""

    def __init__(self, opened: Callable[[], Awaitable[Response]]) -> None:
        self.background = None
        self._opened: Callable[[], Awaitable[Response]] | None = opened

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._decided()
        await response(scope, receive, send)

    async def _decided(self) -> Response:
        opened, self._opened = self._opened, None
        assert opened is not None, "a response is sent once"
        return await opened()


async def _opened(state: ServerState, run_id: str, since: AgentUsage,
                  writer: wire.ChunkWriter, events: AsyncGenerator[RunEvent, None],
                  task: asyncio.Task[AgentOutput]) -> Response:
    """The stream of run ``run_id``, once it shows its first event or has worked
    ``keepalive`` seconds without one; the error response of a run that failed before."""
    first = asyncio.ensure_future(_next_shown(events))
    try:
        await asyncio.wait({first}, timeout=state.config.keepalive)
    except asyncio.CancelledError:  # the server ended the request (its shutdown grace is over)
        first.cancel()
        task.cancel()
        raise answered_shutdown(run_id) from None
    head: First = first
    if first.done():
        head = first.result()  # an open stream keeps neither the task nor its coroutine
        failed = await _failed_before(state, run_id, since, head, task)
        if failed is not None:
            return failed

    def cancel() -> None:
        state.tasks.cancel(run_id)

    return EventStream(_frames(state, run_id, since, writer, head, events, task),
                       keepalive=state.config.keepalive, send_timeout=state.config.send_timeout,
                       on_disconnect=cancel, closing=functools.partial(_stopped, run_id))


def _stopped(run_id: str) -> bytes:
    """The error that ends the stream of run ``run_id`` when the server stops, then ``[DONE]``."""
    stopping = error_body(str(ServerStoppingError(run_id)), status=503, code="server_stopping")
    return _data(wire.dumps(stopping)) + DONE


async def _failed_before(state: ServerState, run_id: str, since: AgentUsage,
                         first: RunEvent | None,
                         task: asyncio.Task[AgentOutput]) -> Response | None:
    """The error response of a run that failed before its first token; ``None`` when it
    did not (its stream goes on; a run that paused is told in it)."""
    if first is None:  # it failed before it was recorded (the app's handlers answer), or paused
        await asyncio.wait({task})
        if isinstance(task.exception(), RunPaused):
            first = None
        else:
            task.result()
    if first is not None and not _ends(first):
        return None
    ending = await _outcome(state, run_id, since, task)
    return _failure_response(ending) if isinstance(ending, RunFailure) else None


async def _frames(state: ServerState, run_id: str, since: AgentUsage,
                  writer: wire.ChunkWriter, first: First,
                  events: AsyncGenerator[RunEvent, None],
                  task: asyncio.Task[AgentOutput]) -> AsyncIterator[bytes]:
    """The role, the text of each token, then the run's ending (the client's tool calls it
    waits on, its finish reason and usage, or its error), then ``[DONE]``."""
    try:
        yield _data(writer.opening())
        event = await first if isinstance(first, asyncio.Future) else first
        if event is not None and not _ends(event):
            yield _token(writer, event)
            # In this frame, not a coroutine or generator of their own: an open stream keeps it.
            async for event in events:
                if event.type == "token":
                    yield _token(writer, event)
                elif event.type in SHOWN:  # the run's done or error: its ending follows
                    break
        ending = await _outcome(state, run_id, since, task)
        if isinstance(ending, RunFailure):
            yield _data(wire.dumps(error_body(ending.message, status=ending.status,
                                              code=ending.code)))
        else:
            for chunk in writer.ending(ending):
                yield _data(chunk)
        yield DONE
    finally:
        if isinstance(first, asyncio.Future):
            first.cancel()
            await asyncio.wait({first})  # its step of ``events`` is over before they close
        await events.aclose()


async def _next_shown(events: AsyncIterator[RunEvent]) -> RunEvent | None:
    """The next of ``events`` a completion shows (``None``: they ended without one)."""
    async for event in events:
        if event.type in SHOWN:
            return event
    return None


async def _outcome(state: ServerState, run_id: str, since: AgentUsage,
                   task: asyncio.Task[AgentOutput]) -> wire.Answer | RunFailure:
    """What a client is told of the finished run ``run_id``: its answer; out of turns, the
    answer so far (``"length"``); paused, the client's tool calls it waits on; else its
    failure. Its usage is since ``since`` (the run's before this completion)."""
    await asyncio.wait({task})
    error = task.exception()
    if error is None:
        return _own(wire.answer(task.result()), since)
    if isinstance(error, MaxTurnsExceededError):
        return _own(wire.out_of_turns(error), since)
    if isinstance(error, RunPaused):
        return rounds.paused_answer(error, since=since)
    if isinstance(error, rounds.ToolRoundError):  # its results came already
        return RunFailure(error.status, error.message, error.code)
    return await run_failure(state, run_id, error)


def _ends(event: RunEvent | None) -> bool:
    """Whether ``event`` is the run's last shown (its ``done`` or ``error``)."""
    return event is not None and event.type != "token"


def _missing(state: ServerState, model_id: str) -> Response | None:
    """``None`` when ``model_id`` is an agent; else its 404."""
    try:
        state.agents.definition(model_id)
    except UnknownAgentError as exc:
        return problem(str(exc), status=404, param="model", code="model_not_found")
    return None


def _failure_response(failure: RunFailure) -> Response:
    return problem(failure.message, status=failure.status, code=failure.code,
                   headers=NO_RETRY)


def _completion_id(run_id: str | None) -> str:
    return f"chatcmpl-{run_id}"


def _token(writer: wire.ChunkWriter, event: RunEvent) -> bytes:
    return _data(writer.token(event.body["text"], event.body["turn"]))


def _data(text: str) -> bytes:
    """One ``data:`` event (JSON text is one line); a lone surrogate a provider let through
    is replaced rather than ending the stream."""
    return b"data: " + text.encode("utf-8", "replace") + b"\n\n"


ROUTES = [
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/models/{model_id}", get_model, methods=["GET"]),
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
]
