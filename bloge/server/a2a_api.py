"""A2A (Agent2Agent): every agent as an A2A agent whose tasks are bloge runs (extra ``[a2a]``).

Each agent has its agent card at ``GET /agents/{id}/.well-known/agent-card.json`` (the default
agent's also at ``GET /.well-known/agent-card.json``) and its JSON-RPC endpoint at
``POST /agents/{id}``, which speaks A2A 1.0 (``SendMessage``, ``SendStreamingMessage``,
``GetTask``, ``CancelTask``, ``SubscribeToTask``; requests with ``A2A-Version: 1.0``) and 0.3
(``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``,
``tasks/resubscribe``; requests without the header), through the protocol's SDK.

A task is a run: its id is the run's id (``GET /runs/{id}`` shows it, ``bloge runs`` lists
it), its ``contextId`` the run's thread (a message that names one continues that thread), and
it is started, limited (``max_concurrent_runs``, ``request_timeout``), recorded and owned as a
run of the runs API is: behind the server's guard and API keys, another key's task is not
found. A streamed task shows the answer's tokens as appends to its ``answer`` artifact and
each tool call as a ``working`` status update; a client that leaves a stream cancels its task.
A run that waits for an approval or for tool results is an ``input-required`` task, decided
through the runs API. Push notifications and task lists are not offered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bloge.a2a import agent_card
from bloge.a2a.parts import text_of
from bloge.agent import AgentOutput, AgentRunError, RunPaused
from bloge.core.ids import new_id
from bloge.server.a2a_tasks import ENDED, STATES, submitted, task_of, updates
from bloge.server.agents import UnknownAgentError
from bloge.server.failures import UNAVAILABLE
from bloge.server.launch import start_streamed
from bloge.server.principals import owner_filter, run_context
from bloge.server.problems import problem
from bloge.server.runs_api import stopped
from bloge.server.state import ServerState
from bloge.server.tasks import RunCancelledError, TooManyRunsError
from bloge.store import Run, StoreError, StoreNotFoundError, follow

CARD_PATH = "/.well-known/agent-card.json"
_log = logging.getLogger("bloge.server")

class A2aEndpoint:
    """The agents of ``state`` as A2A agents; :attr:`routes` go into the application."""

    def __init__(self, state: ServerState, *, version: str) -> None:
        self.state = state
        self.version = version
        dispatcher = JsonRpcDispatcher(_RunsHandler(state), context_builder=_Caller(state),
                                       enable_v0_3_compat=True)
        self.routes: list[BaseRoute] = [
            Route(CARD_PATH, self._default_card, methods=["GET"]),
            Route("/agents/{agent_id}" + CARD_PATH, self._card, methods=["GET"]),
            Route("/agents/{agent_id}", _known_agent(state, dispatcher.handle_requests),
                  methods=["POST"]),
        ]

    async def _default_card(self, request: Request) -> Response:
        try:
            agent_id = self.state.agents.default_id()
        except UnknownAgentError as error:
            return problem(f"{error}; each agent's card is at /agents/{{id}}{CARD_PATH}",
                           status=404, code="no_default_agent")
        return await self._answer_card(request, agent_id)

    async def _card(self, request: Request) -> Response:
        return await self._answer_card(request, request.path_params["agent_id"])

    async def _answer_card(self, request: Request, agent_id: str) -> Response:
        definition = self.state.agents.definition(agent_id)  # 404 naming the agents
        url = f"{str(request.base_url).rstrip('/')}/agents/{agent_id}"
        card = agent_card(definition, url, keys=bool(self.state.config.api_keys),
                          version=self.version)
        return JSONResponse(agent_card_to_dict(card))


def _known_agent(state: ServerState, endpoint: Any) -> Any:
    """``endpoint``, for an agent the server serves (else the 404 naming the agents)."""

    async def checked(request: Request) -> Response:
        state.agents.definition(request.path_params["agent_id"])
        answer: Response = await endpoint(request)
        return answer

    return checked


class _Caller(DefaultServerCallContextBuilder):
    """The SDK's call context, with what bloge knows of the request: its agent, the context
    its runs run in (the principal) and whose runs it may see."""

    def __init__(self, state: ServerState) -> None:
        self.state = state

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["agent_id"] = request.path_params["agent_id"]
        context.state["run_context"] = run_context(request)
        context.state["owner"] = owner_filter(request)
        return context


class _RunsHandler(RequestHandler):
    """A2A's requests as bloge runs (see the module docs)."""

    def __init__(self, state: ServerState) -> None:
        self.state = state

    async def on_message_send(self, params: pb.SendMessageRequest,
                              context: ServerCallContext) -> pb.Task | pb.Message:
        agent_id, text, thread_id = _asked(params, context)
        await self._check_conversation(params.message.context_id, context)
        run_id = new_id()
        operator = self.state.agents.whole(agent_id)
        ctx = context.state["run_context"]
        task = self._start(run_id, agent_id, operator.aexecute(
            text, ctx, thread_id=thread_id, run_id=run_id))
        if params.configuration.return_immediately:
            return submitted(run_id, thread_id, text)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not (task.cancelled() and current is not None and not current.cancelling()):
                task.cancel()  # the client went away, or the server stops
                raise
        except (AgentRunError, RunCancelledError, RunPaused, TimeoutError):
            pass  # the run's record says how it ended
        except StoreError as error:
            raise _unavailable(run_id, error) from None
        return await self._task(run_id, params.configuration.history_length or None)

    async def _check_conversation(self, context_id: str, context: ServerCallContext) -> None:
        """A ``contextId`` names a conversation of the caller's, or a new one: another
        key's is refused (as the runs API refuses its thread)."""
        owner = context.state["owner"]
        if not context_id or owner is None:
            return
        try:
            await self.state.store.get_thread(context_id, owner=owner)
        except StoreNotFoundError:
            try:
                await self.state.store.get_thread(context_id)
            except StoreNotFoundError:
                return  # a conversation the caller starts with an id of its own
            raise InvalidParamsError(f"no context {context_id!r} of this key's; send one of "
                                     "yours, or none to start a conversation") from None

    async def on_message_send_stream(self, params: pb.SendMessageRequest,
                                     context: ServerCallContext
                                     ) -> AsyncGenerator[Any, None]:
        agent_id, text, thread_id = _asked(params, context)
        await self._check_conversation(params.message.context_id, context)
        run_id = new_id()
        streaming = self.state.agents.streaming(agent_id)
        ctx = context.state["run_context"]
        try:
            task, events = start_streamed(
                self.state, agent_id, run_id,
                lambda run_id, sink: streaming.arun(text, ctx, on_chunk=sink,
                                                    thread_id=thread_id, run_id=run_id))
        except TooManyRunsError:
            raise self._busy() from None
        yield submitted(run_id, thread_id, text)
        try:
            async for update in updates(run_id, thread_id, events):
                yield update
        finally:
            if not task.done():  # the client left the stream
                self.state.tasks.cancel(run_id)

    async def on_get_task(self, params: pb.GetTaskRequest,
                          context: ServerCallContext) -> pb.Task | None:
        run = await self._run(params.id, context)
        return task_of(run, params.history_length or None)

    async def on_cancel_task(self, params: pb.CancelTaskRequest,
                             context: ServerCallContext) -> pb.Task | None:
        run = await self._run(params.id, context)
        if STATES[run.status] in ENDED:
            raise TaskNotCancelableError(f"task {run.id} has ended ({run.status.value})")
        run = await self.state.cancels.cancel_run(run.id)
        self.state.tasks.cancel(run.id)
        return task_of(await stopped(self.state.store, run))

    async def on_subscribe_to_task(self, params: pb.SubscribeToTaskRequest,
                                   context: ServerCallContext) -> AsyncGenerator[Any, None]:
        run = await self._run(params.id, context)
        yield task_of(run)
        if STATES[run.status] in ENDED:
            return
        async for update in updates(run.id, run.thread_id,
                                     follow(self.state.store, run.id, after=run.event_count)):
            yield update

    async def on_list_tasks(self, params: pb.ListTasksRequest,
                            context: ServerCallContext) -> pb.ListTasksResponse:
        raise UnsupportedOperationError("tasks are runs: GET /runs/{id} reads one, and "
                                        "bloge runs list lists them")

    async def on_create_task_push_notification_config(
            self, params: pb.TaskPushNotificationConfig,
            context: ServerCallContext) -> pb.TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
            self, params: pb.GetTaskPushNotificationConfigRequest,
            context: ServerCallContext) -> pb.TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
            self, params: pb.ListTaskPushNotificationConfigsRequest,
            context: ServerCallContext) -> pb.ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
            self, params: pb.DeleteTaskPushNotificationConfigRequest,
            context: ServerCallContext) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(self, params: pb.GetExtendedAgentCardRequest,
                                         context: ServerCallContext) -> pb.AgentCard:
        raise UnsupportedOperationError("there is no extended agent card: the card is the "
                                        "same for every key")

    def _start(self, run_id: str, agent_id: str,
               work: Awaitable[AgentOutput]) -> asyncio.Task[AgentOutput]:
        try:
            return self.state.tasks.start(run_id, agent_id, work,
                                          timeout=self.state.config.request_timeout)
        except TooManyRunsError:
            raise self._busy() from None

    def _busy(self) -> InternalError:
        return InternalError(f"the server runs its maximum of "
                             f"{self.state.config.max_concurrent_runs} runs; try again shortly")

    async def _run(self, run_id: str, context: ServerCallContext) -> Run:
        """Run ``run_id`` when the caller may see it and it is a task of this agent."""
        try:
            run = await self.state.store.get_run(run_id, owner=context.state["owner"])
        except StoreNotFoundError:
            raise TaskNotFoundError(f"no task {run_id!r}") from None
        except StoreError as error:
            raise _unavailable(run_id, error) from None
        if run.agent_id != context.state["agent_id"]:
            raise TaskNotFoundError(f"no task {run_id!r}")
        return run

    async def _task(self, run_id: str, history: int | None = None) -> pb.Task:
        try:
            return task_of(await self.state.store.get_run(run_id), history)
        except StoreError as error:
            raise _unavailable(run_id, error) from None


def _unavailable(run_id: str, error: StoreError) -> InternalError:
    """The client's error when the store failed: where the store is, is for the log alone."""
    _log.warning("A2A task %s: %s", run_id, error)
    return InternalError(f"task {run_id}: {UNAVAILABLE}")


def _asked(params: pb.SendMessageRequest,
           context: ServerCallContext) -> tuple[str, str, str]:
    """The agent asked, the message's text and the thread it goes on (its ``contextId``,
    else a new one)."""
    sent = params.message
    if sent.task_id:
        raise InvalidParamsError(f"task {sent.task_id} has ended (a bloge task ends with its "
                                 "answer); send the message without a taskId, with its "
                                 "contextId to go on in its conversation")
    text = text_of(sent.parts)
    if not text.strip():
        raise InvalidParamsError("the message has no text or data part")
    return context.state["agent_id"], text, sent.context_id or new_id()
