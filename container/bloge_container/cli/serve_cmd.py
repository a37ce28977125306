"""``bloge serve``: every agent over HTTP — the runs API with SSE, ``/chat``, the
OpenAI-compatible ``/v1``, the chat page, health and metrics."""

from __future__ import annotations

import errno
import ipaddress
import os
import tempfile
from typing import Annotated

import typer

from bloge_container.cli.console import err, failure, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container


def serve(
    host: Annotated[str | None, typer.Option(
        "--host", help="Address to bind (default bloge.server.host: 127.0.0.1).",
        show_default=False)] = None,
    port: Annotated[int | None, typer.Option(
        "--port", min=0, max=65535, help="Port (default bloge.server.port: 8000).",
        show_default=False)] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="Worker processes sharing the run store "
        "(default bloge.server.workers: 1).", show_default=False)] = None,
    insecure: Annotated[bool, typer.Option(
        "--insecure", help="Serve a non-loopback address without API keys.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Serve the agents of bloge.agents.dsl-locations over HTTP until Ctrl-C or SIGTERM
    (runs still going then get bloge.server.shutdown-grace to finish, then are cancelled
    with their checkpoint)."""
    with reported_errors():
        try:
            import uvicorn
        except ImportError:
            raise failure("bloge serve needs Starlette and uvicorn: pip install "
                          "'bloge[server]'") from None
        container = open_container(config, profile)
        settings = container.settings()
        bind = host or settings.server.host
        listen = settings.server.port if port is None else port
        processes = workers or settings.server.workers
        keys = (*settings.server.api_keys, *settings.server.admin_keys)
        if not _loopback(bind) and not keys and not insecure:
            raise failure(f"serving {bind} without API keys would let anyone on the network "
                          "run the agents: set bloge.server.api-keys (and allowed-hosts), or "
                          "pass --insecure")
        _check_bindable(bind, listen)
        from bloge.server.connections import uvicorn_options
        from bloge.server.metrics import MULTIPROCESS_DIR
        from bloge_container.application import freeze_startup_objects
        from bloge_container.serving import server_app, server_config

        app = server_app(container, host=bind, port=listen)
        # The connections' deadlines and cap, which uvicorn runs for the app.
        limits = uvicorn_options(server_config(settings, host=bind, port=listen))
        agents = ", ".join(sorted(container.agents())) or "none"
        err.print(f"bloge serve: agents {agents} on http://{_shown(bind)}:{listen} "
                  f"({_keys_shown(len(keys))}; "
                  f"{processes} worker{'s' if processes > 1 else ''}); Ctrl-C stops",
                  markup=False)
        grace = max(1, round(settings.server.shutdown_grace))
        from bloge.server.access_log import log_config
        if processes == 1:
            freeze_startup_objects()
            uvicorn.run(app, host=bind, port=listen, lifespan="on", log_level="info",
                        log_config=log_config(), timeout_graceful_shutdown=grace, **limits)
            return
        project = container.project().path
        settings_file = os.environ.get("BLOGE_SETTINGS_FILE") or (
            str(config.resolve()) if config is not None else str(project / "settings.yaml"))
        os.environ["BLOGE_SETTINGS_FILE"] = settings_file
        if profile is not None:
            os.environ["BLOGE_PROFILE"] = profile
        # The workers read the settings again: --host and --port are theirs too (the allowed
        # hosts default to the bound one).
        os.environ["BLOGE_SERVER__HOST"] = bind
        os.environ["BLOGE_SERVER__PORT"] = str(listen)
        # The workers' metrics, added up by whichever answers /metrics; removed at the end.
        with tempfile.TemporaryDirectory(prefix="bloge-metrics-") as metrics:
            os.environ[MULTIPROCESS_DIR] = metrics
            uvicorn.run("bloge_container.serving:worker_app", factory=True, host=bind,
                        port=listen, workers=processes, lifespan="on", log_level="info",
                        log_config=log_config(), timeout_graceful_shutdown=grace, **limits)


def _keys_shown(count: int) -> str:
    """How many API keys guard the server (never the keys)."""
    if count == 0:
        return "no API key"
    return "1 API key" if count == 1 else f"{count} API keys"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_bindable(host: str, port: int) -> None:
    """Refuse an address this machine cannot listen on (a port in use, a host that is not
    one of its addresses) before anything starts: uvicorn would log it and exit 3."""
    import socket

    where = f"http://{_shown(host)}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise failure(f"cannot listen on {where}: the host does not resolve ({exc}); "
                      "give --host an address of this machine") from None
    with socket.socket(family, kind, proto) as probe:
        # As uvicorn binds: a port left in TIME_WAIT by a server that just stopped is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            hint = ("stop what uses it or pick another --port" if exc.errno == errno.EADDRINUSE
                    else "give --host an address of this machine")
            raise failure(f"cannot listen on {where}: {reason.lower()}; {hint}") from None


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host

