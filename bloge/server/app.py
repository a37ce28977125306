"""``create_app``: the Starlette application ``bloge serve`` runs."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bloge.agent import Agent
from bloge.rpc import Handler
from bloge.rpc.asgi import rpc_routes
from bloge.server import (
    approvals_api,
    autopilot_api,
    chat_api,
    console_api,
    health,
    openai_api,
    page,
    runs_api,
)
from bloge.server.agents import ServedAgents
from bloge.server.config import ServerConfig
from bloge.server.failures import HANDLERS
from bloge.server.guard import Guard
from bloge.server.launch import log_failure
from bloge.server.metrics import Metrics
from bloge.server.problems import problem
from bloge.server.stalled import CHECK_SECONDS, continuing_stalled
from bloge.server.state import RunCanceller, ServerState
from bloge.server.tasks import RunTasks
from bloge.server.tracing import TraceContext
from bloge.store import Store

if TYPE_CHECKING:
    from bloge.autopilot import Autopilot
    from bloge.autopilot.rates import ErrorRateWatch


def create_app(agents: ServedAgents | Sequence[Agent], *, store: Store,
               config: ServerConfig | None = None, metrics: Metrics | None = None,
               close_store: bool = False,
               autopilot: Autopilot | None = None, autopilot_refresh: float = 5.0,
               autopilot_watches: Sequence[ErrorRateWatch] = (),
               rpc: Mapping[str, Handler] | None = None, mcp: bool = False,
               mcp_off: str | None = None, a2a: bool = False, a2a_off: str | None = None,
               on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
               expiry_check: float = CHECK_SECONDS,
               cancels: RunCanceller | None = None) -> Guard:
    """The ASGI application serving ``agents``, recording every run in ``store``.

    ``agents`` are :class:`~bloge.Agent` objects, served by their ``name`` (the first is the
    default one), or a :class:`ServedAgents` of definitions (as ``bloge serve`` builds it):

    >>> app = create_app(agents=[Agent(llm, [lookup], name="support")], store=open_store())

    Put ``metrics`` (a :class:`Metrics`) among the agents' listeners to count their turns,
    model and tool calls; the app counts runs itself. The app is guarded (see
    :class:`~bloge.server.guard.Guard`); at shutdown, runs still going get the grace period
    and are then cancelled; with ``close_store``, the store is closed last. With an
    ``autopilot``, ``/autopilot/…`` serves its approvals (see
    :mod:`bloge.server.autopilot_api`): decisions made by other processes are taken in every
    ``autopilot_refresh`` seconds, and each of ``autopilot_watches`` ticks.
    ``rpc`` (service name → handler, see :func:`bloge.rpc.serve`) are served at
    ``POST /rpc/{service}/{method}``, behind the same guard. With ``mcp`` (extra ``[mcp]``),
    ``/mcp`` serves every agent as an MCP tool (see :mod:`bloge.server.mcp_api`); without it,
    ``mcp_off`` says why (``pip install 'bloge[mcp]'``) to a client of ``/mcp``, in a 404.
    With ``a2a`` (extra ``[a2a]``), every agent is an A2A agent too: its card at
    ``/agents/{id}/.well-known/agent-card.json``, its tasks (runs) at ``POST /agents/{id}``
    (see :mod:`bloge.server.a2a_api`); without it, ``a2a_off`` says why to a client of those
    paths, in a 404.
    ``on_shutdown`` are awaited last, after the runs and the store (the application's own
    resources: its MCP servers). Every ``expiry_check`` seconds, paused runs that can go on
    but that nothing else continues (their calls expired, or were all answered with
    ``--no-continue``) are continued (see :mod:`bloge.server.stalled`). ``cancels`` asks runs
    to stop (``POST /runs/{id}/cancel``, an A2A task's cancel): ``store`` by default; on
    Temporal, the agents' ``TemporalRunStore``, which ends a paused run's workflow too.
    """
    settings = config or ServerConfig()
    counted = metrics or Metrics()
    if not isinstance(agents, ServedAgents):
        agents = ServedAgents.of(agents, store=store, listeners=(counted,))
    tasks = RunTasks(settings.max_concurrent_runs, finished=counted.run_finished,
                     failed=functools.partial(log_failure, store))
    endpoint = None
    if mcp:
        from bloge.server.mcp_api import McpEndpoint  # noqa: PLC0415 -- the extra [mcp] is optional

        endpoint = McpEndpoint(agents, tasks, settings, store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if endpoint is not None:  # closed after the runs' grace: its calls are runs
                await stack.enter_async_context(endpoint.running())
            async with autopilot_api.running(app, refresh_interval=autopilot_refresh,
                                             watches=autopilot_watches), \
                    continuing_stalled(app.state.bloge, every=expiry_check):
                yield
            await tasks.shutdown(settings.shutdown_grace)
        if close_store:
            await store.aclose()
        for shutdown in on_shutdown:
            await shutdown()

    state = ServerState(agents, store, settings, tasks, counted,
                        store if cancels is None else cancels)
    # Starlette tries the routes in order: the busiest first.
    app = Starlette(routes=[*openai_api.ROUTES, *console_api.ROUTES, *runs_api.ROUTES,
                            *approvals_api.ROUTES, *chat_api.ROUTES,
                            *page.ROUTES, *health.ROUTES, *autopilot_api.ROUTES,
                            *rpc_routes(rpc or {}, max_body_bytes=settings.max_body_bytes),
                            *(endpoint.routes if endpoint is not None
                              else _mcp_off_routes(mcp_off)),
                            *(_a2a_routes(state) if a2a else _a2a_off_routes(a2a_off))],
                    exception_handlers=HANDLERS, lifespan=lifespan,
                    middleware=[Middleware(TraceContext)] if store.tracing is not None else [])
    app.state.bloge = state
    app.state.autopilot = autopilot
    return Guard(app, settings)


def _mcp_off_routes(reason: str | None) -> list[BaseRoute]:
    """``/mcp`` when it is off for ``reason``: a 404 that says why, instead of no such path."""
    if reason is None:
        return []

    async def off(request: Request) -> Response:
        return problem(f"{request.url.path} is off: {reason}", status=404, code="mcp_unavailable")

    return [Route("/mcp", endpoint=off, methods=["GET", "POST", "DELETE"])]


def _a2a_routes(state: ServerState) -> list[BaseRoute]:
    from importlib.metadata import version  # noqa: PLC0415 -- read once, at start-up

    from bloge.server.a2a_api import A2aEndpoint  # noqa: PLC0415 -- the extra [a2a] is optional

    return A2aEndpoint(state, version=version("bloge")).routes


def _a2a_off_routes(reason: str | None) -> list[BaseRoute]:
    """The A2A paths when A2A is off for ``reason``: a 404 that says why."""
    if reason is None:
        return []

    async def off(request: Request) -> Response:
        return problem(f"A2A is off: {reason}", status=404, code="a2a_unavailable")

    return [Route("/.well-known/agent-card.json", endpoint=off, methods=["GET"]),
            Route("/agents/{agent_id}/.well-known/agent-card.json", endpoint=off,
                  methods=["GET"]),
            Route("/agents/{agent_id}", endpoint=off, methods=["POST"])]
