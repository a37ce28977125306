"""``bloge serve``: every agent over HTTP — the runs API with SSE, ``/chat``, the
OpenAI-compatible ``/v1``, the chat page, health and metrics."""

from __future__ import annotations

import ipaddress
import os
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
        if not _loopback(bind) and not settings.server.api_keys and not insecure:
            raise failure(f"serving {bind} without API keys would let anyone on the network "
                          "run the agents: set bloge.server.api-keys (and allowed-hosts), or "
                          "pass --insecure")
        from bloge_container.serving import server_app

        app = server_app(container, host=bind, port=listen)
        agents = ", ".join(sorted(container.agents())) or "none"
        keys = "an API key" if settings.server.api_keys else "no key"
        err.print(f"bloge serve: agents {agents} on http://{_shown(bind)}:{listen} ({keys}; "
                  f"{processes} worker{'s' if processes > 1 else ''}); Ctrl-C stops",
                  markup=False)
        grace = max(1, round(settings.server.shutdown_grace))
        if processes == 1:
            _freeze_garbage()
            uvicorn.run(app, host=bind, port=listen, lifespan="on", log_level="info",
                        timeout_graceful_shutdown=grace)
            return
        project = container.project().path
        settings_file = os.environ.get("BLOGE_SETTINGS_FILE") or (
            str(config.resolve()) if config is not None else str(project / "settings.yaml"))
        os.environ["BLOGE_SETTINGS_FILE"] = settings_file
        if profile is not None:
            os.environ["BLOGE_PROFILE"] = profile
        uvicorn.run("bloge_container.serving:worker_app", factory=True, host=bind, port=listen,
                    workers=processes, lifespan="on", log_level="info",
                    timeout_graceful_shutdown=grace)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _freeze_garbage() -> None:
    """What start-up made lives as long as the server: out of the collector's way."""
    import gc

    gc.collect()
    gc.freeze()
