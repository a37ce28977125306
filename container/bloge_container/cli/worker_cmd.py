"""``bloge worker``: a Temporal worker for the configured agents (``bloge.temporal``)."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

from bloge_container.cli.console import err, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption

if TYPE_CHECKING:
    from bloge.temporal import Connection, TemporalOptions
    from bloge_container.application import ApplicationContainer


def worker(config: ConfigOption = None, profile: ProfileOption = None) -> None:
    """Serve the agents of bloge.agents.dsl-locations as a Temporal worker: their runs'
    workflows and their model and tool calls (bloge.temporal.address, namespace,
    task-queue), until Ctrl-C or SIGTERM. Runs started with bloge.runner: temporal, by any
    machine, run here; start as many workers as you like."""
    with reported_errors():
        from bloge_config import load_settings_with_sources
        from bloge_container import temporal
        from bloge_container.application import create_container

        temporal.require_extra("bloge worker")
        loaded = load_settings_with_sources(settings_file=config, profile=profile)
        chosen = temporal.options(loaded.settings)
        container = create_container(temporal.worker_settings(loaded), settings_file=config,
                                     profile=profile)
        asyncio.run(_serve(container, temporal.connection(loaded.settings), chosen))


async def _serve(container: ApplicationContainer, connection: Connection,
                 chosen: TemporalOptions) -> None:
    from bloge.temporal import agent_worker, connect
    from bloge_container import temporal
    from bloge_container.application import close_container, freeze_startup_objects

    try:
        served = temporal.served(container, chosen)
        warnings = temporal.budget_warnings(container)
        client = await connect(connection)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        async with agent_worker(client, served, chosen, store=container.run_store()):
            err.print(f"worker: {len(served)} agent(s) ({', '.join(sorted(served)) or 'none'}) "
                      f"on task queue {chosen.task_queue!r} at {connection.address} (namespace "
                      f"{connection.namespace!r}); Ctrl-C to stop", markup=False)
            for warning in warnings:
                err.print(f"worker: warning: {warning}", markup=False)
            freeze_startup_objects()
            await stop.wait()
            err.print("worker: stopping (running calls get "
                      f"{chosen.heartbeat_timeout:g} s to finish)", markup=False)
    finally:
        await close_container(container)
