"""``/mcp``: every agent as a tool of a streamable-HTTP MCP endpoint (extra ``[mcp]``).

Stateless (no session to keep: any worker answers any request) with JSON answers. The
:class:`~bloge.server.guard.Guard` in front checks ``Host`` and ``Origin`` (DNS rebinding,
CVE-2025-66416) and the API keys, as for every endpoint, so the SDK's own Host check is off:
it would only know the loopback names. Each call is a run of the server — recorded in the
store, counted against ``max_concurrent_runs``, bounded by ``request_timeout`` — and belongs
to the caller's API key, as a run of the runs API does.

Only ``POST`` is served. A stateless endpoint has nothing to say unasked (no session, no
server-initiated requests or notifications), so ``GET`` — which asks for a stream of those —
answers 405, as the MCP spec (streamable HTTP, "Listening for Messages from the Server")
says a server that offers no such stream must; the SDK would open one that never sends
anything. ``DELETE`` ends a session, and there is none: 405 too (the spec allows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INTERNAL_ERROR
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bloge.agent import AgentRunError, RunPaused
from bloge.core.errors import RunError
from bloge.core.ids import new_id
from bloge.mcp import AgentTool, agents_server
from bloge.mcp.agents import describe_agent
from bloge.server.agents import ServedAgents
from bloge.server.config import ServerConfig
from bloge.server.failures import UNAVAILABLE
from bloge.server.launch import failed_because
from bloge.server.principals import run_context
from bloge.server.problems import problem
from bloge.server.tasks import RunCancelledError, RunTasks, TooManyRunsError, answered_shutdown
from bloge.store import Store, StoreError

PATH = "/mcp"
_log = logging.getLogger("bloge.server")


class McpEndpoint:
    """The agents of ``agents`` at ``/mcp``; :meth:`running` belongs in the app's lifespan."""

    def __init__(self, agents: ServedAgents, tasks: RunTasks, config: ServerConfig,
                 store: Store) -> None:
        tools = [AgentTool(agent_id, describe_agent(agents.definition(agent_id)),
                           _answer(agents, tasks, config, store, agent_id))
                 for agent_id in agents.ids()]
        self.manager = StreamableHTTPSessionManager(
            app=agents_server(tools), json_response=True, stateless=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=config.max_body_bytes)
        self.routes: list[BaseRoute] = [
            Route(PATH, endpoint=_AnsweredAtShutdown(StreamableHTTPASGIApp(self.manager)),
                  methods=["POST"]),
            Route(PATH, endpoint=_not_offered, methods=["GET", "DELETE"])]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield


#: The runs the current ``/mcp`` request started (its tool calls): the SDK runs a call's
#: handler in a task of its own, with the context of the request that sent it.
_STARTED: ContextVar[list[str] | None] = ContextVar("bloge_mcp_runs", default=None)


class _AnsweredAtShutdown:
    """The SDK's endpoint. A request the server ends at shutdown (its grace is over) while
    its run goes on is answered 503, naming the run and how to resume it, in MCP's error shape
    (a JSON-RPC error, the request's ``id``): uvicorn's cancellation would be a traceback in
    the log and a text/plain 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        runs: list[str] = []
        body = bytearray()
        answering = False

        async def receiving() -> Message:
            message = await receive()
            body.extend(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            nonlocal answering
            answering = answering or message["type"] == "http.response.start"
            await send(message)

        token = _STARTED.set(runs)
        try:
            await self.app(scope, receiving, sending)
        except asyncio.CancelledError:
            if not runs or answering:
                raise
            stopping = answered_shutdown(runs[-1])
            await JSONResponse(
                {"jsonrpc": "2.0", "id": _request_id(bytes(body)),
                 "error": {"code": INTERNAL_ERROR, "message": str(stopping),
                           "data": {"run_id": stopping.run_id, "code": "server_stopping"}}},
                status_code=503)(scope, receive, send)
        finally:
            _STARTED.reset(token)


def _request_id(body: bytes) -> str | int | None:
    """The ``id`` of the JSON-RPC request ``body``; ``None`` (as JSON-RPC answers what it
    cannot tell) for a batch or a body that is not one."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return None
    found = request.get("id") if isinstance(request, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


#: Why a method other than POST is refused.
_REFUSED = {
    "GET": "this stateless MCP endpoint sends no server-initiated messages, so it offers no "
           "SSE stream; send JSON-RPC requests with POST /mcp",
    "HEAD": "this stateless MCP endpoint offers no SSE stream; send JSON-RPC requests with "
            "POST /mcp",
    "DELETE": "this stateless MCP endpoint keeps no session, so there is none to end",
}


async def _not_offered(request: Request) -> Response:
    """405 for ``GET`` (and ``HEAD``) and ``DELETE``, saying why, in the one error shape."""
    return problem(f"{request.method} {PATH}: {_REFUSED[request.method]}", status=405,
                   headers={"Allow": "POST"})


def _answer(agents: ServedAgents, tasks: RunTasks, config: ServerConfig, store: Store,
            agent_id: str) -> Callable[[str, Any], Awaitable[str]]:
    async def answer(message: str, request: Request | None) -> str:
        operator = agents.whole(agent_id)
        run_id = new_id()
        ctx = run_context(request) if request is not None else None
        try:
            task = tasks.start(run_id, agent_id, operator.aexecute(message, ctx, run_id=run_id),
                               timeout=config.request_timeout)
            started = _STARTED.get()
            if started is not None:
                started.append(run_id)
        except TooManyRunsError:
            raise RunError(f"the server runs its maximum of {config.max_concurrent_runs} "
                           "runs; try again shortly") from None
        try:
            output = await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and current is not None and not current.cancelling():
                # Only the run was: asked to stop through the run store (bloge runs cancel,
                # another worker's POST /runs/{id}/cancel).
                raise RunError(f"run {run_id} was cancelled") from None
            task.cancel()  # the client went away, or the server stops
            raise
        except RunCancelledError:
            raise RunError(f"run {run_id} was cancelled") from None
        except TimeoutError:
            raise RunError(f"run {run_id} took longer than the server's request timeout "
                           f"({config.request_timeout:g} s)") from None
        except RunPaused as paused:  # not a failure: the caller is told where it is decided
            raise RunError(waits_for(run_id, paused)) from None
        except AgentRunError as error:
            why = await failed_because(store, run_id, error)
            raise RunError(f"run {run_id} failed: {why}") from None
        except StoreError as error:  # where the store is, is for the log alone
            _log.warning("/mcp run %s: %s", run_id, error)
            raise RunError(f"run {run_id}: {UNAVAILABLE}") from None
        return output.content or ""

    return answer


def waits_for(run_id: str, paused: RunPaused) -> str:
    """The tool's error for a run that paused: what it waits on, and where that is decided
    (the run stays in the store until then)."""
    approvals = [f"{call.tool} ({call.call_id})" for call in paused.pending
                 if call.kind == "approval"]
    external = [f"{call.tool} ({call.call_id})" for call in paused.pending
                if call.kind != "approval"]
    told = [f"run {run_id} has not finished: it waits"]
    if approvals:
        told.append(f" for a person's approval of {', '.join(approvals)}: decide each with "
                    f"POST /runs/{run_id}/approvals/{{call_id}} (or `bloge approvals approve "
                    f"{run_id} <call_id>` / `bloge approvals deny {run_id} <call_id> --reason "
                    f"…`)")
    if external:
        told.append(f"{';' if approvals else ''} for the results of {', '.join(external)}: "
                    f"post them with POST /runs/{run_id}/tool-results")
    told.append(f"; the run then continues, and GET /runs/{run_id} (or GET /runs/{run_id}"
                "/stream) shows its answer")
    return "".join(told)
