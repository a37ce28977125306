"""What ``bloge serve`` runs: the application's agents behind :mod:`bloge.server`, configured
from ``bloge.server``, recording every run in the run store."""

from __future__ import annotations

import os
from typing import Any

from bloge_config import BlogeSettings
from bloge_container.a2a import a2a_endpoint
from bloge_container.application import ApplicationContainer, create_container
from bloge_container.autopilot import watches
from bloge_container.budgets import budget_policy, refuse_unkept_on_temporal
from bloge_container.errors import ConfigurationError
from bloge_container.mcp import mcp_endpoint

#: The variables `bloge serve --workers N` hands its worker processes.
WORKER_ENV = ("BLOGE_SETTINGS_FILE", "BLOGE_PROFILE", "BLOGE_SERVER__HOST", "BLOGE_SERVER__PORT")


def server_config(settings: BlogeSettings, *, host: str | None = None,
                  port: int | None = None) -> Any:
    """``bloge.server`` as a :class:`bloge.server.ServerConfig` (``host``/``port`` win)."""
    from bloge.server import ServerConfig

    section = settings.server
    return ServerConfig(
        host=host or section.host, port=section.port if port is None else port,
        default_agent=section.default_agent,
        api_keys=tuple(key.get_secret_value() for key in section.api_keys),
        admin_keys=tuple(key.get_secret_value() for key in section.admin_keys),
        allowed_hosts=section.allowed_hosts, cors_origins=section.cors_origins,
        max_body_bytes=int(section.max_body_bytes),
        max_concurrent_runs=section.max_concurrent_runs,
        request_timeout=section.request_timeout, keepalive=section.keepalive,
        send_timeout=section.send_timeout, shutdown_grace=section.shutdown_grace,
        header_timeout=section.header_timeout, body_timeout=section.body_timeout,
        idle_timeout=section.idle_timeout, max_connections=section.max_connections,
        backlog=section.backlog,
        four_eyes=settings.approvals.four_eyes)


def server_app(container: ApplicationContainer, *, host: str | None = None,
               port: int | None = None) -> Any:
    """The ASGI application serving every agent of the container."""
    from bloge.server import Metrics, ServedAgents, UnknownAgentError, create_app
    from bloge_container.agents import materialize

    store = container.run_store()
    if store is None:
        raise ConfigurationError("bloge serve records every run and follows streams through "
                                 "the run store, and bloge.store.enabled is false")
    config = server_config(container.settings(), host=host, port=port)
    budgets = budget_policy(container.settings())
    metrics = Metrics(prices=budgets.prices)
    registry = container.operator_registry()
    listeners = (*container.listeners(), metrics)
    report = container.report()

    from bloge_container.temporal import runs_store

    if container.settings().runner == "temporal":
        refuse_unkept_on_temporal(container.settings(), "bloge serve (bloge.runner: temporal)")

    # bloge.runner: temporal runs on workers; the metrics count them from their events, and
    # its cancels end a paused run's workflow too.
    runs = runs_store(container.settings(), store, listeners=(metrics,))

    def build(definition: Any) -> Any:
        return materialize(definition, registry, listeners, report, runs, budgets=budgets)

    definitions = {agent_id: loaded.definition for agent_id, loaded in container.agents().items()}
    try:
        agents = ServedAgents(definitions, build, default=config.default_agent)
    except UnknownAgentError as exc:
        raise ConfigurationError(f"bloge.server.default-agent: {exc}") from None
    wiring = container.autopilot()
    mcp_off = mcp_endpoint(report)
    a2a_off = a2a_endpoint(container.settings(), report)
    app = create_app(agents, store=store, config=config, metrics=metrics, close_store=True,
                     mcp=mcp_off is None, mcp_off=mcp_off, a2a=a2a_off is None, a2a_off=a2a_off,
                     on_shutdown=_stopping(container), cancels=runs,
                     autopilot=None if wiring is None else wiring.autopilot,
                     autopilot_refresh=container.settings().autopilot.refresh_interval,
                     rpc=container.rpc_services().exposed["http"],
                     autopilot_watches=watches(wiring, container.error_rates(),
                                               container.settings()))
    if wiring is not None:
        starlette: Any = app.app  # the guard's inner application holds the server's state
        wiring.attach_server(agents, starlette.state.bloge.tasks)
    return app


def _stopping(container: ApplicationContainer) -> list[Any]:
    """What the server stops at its shutdown: the application's MCP servers."""
    import asyncio

    servers = container.mcp_servers()
    if servers is None:
        return []

    async def stop() -> None:
        await asyncio.to_thread(servers.close)

    return [stop]


def worker_app() -> Any:
    """The application of one ``bloge serve --workers N`` worker: the settings are found as
    the parent found them, with its ``--host`` and ``--port`` (:data:`WORKER_ENV`)."""
    container = create_container(settings_file=os.environ.get("BLOGE_SETTINGS_FILE") or None)
    return server_app(container)
