"""``ApplicationContainer``: the composition root, wired with dependency-injector.

Every component is a provider that can be replaced in tests with ``override()``::

    container = create_container(settings)
    container.llm_provider.override(providers.Object(ScriptedProvider("hi")))
    container.agents()["customerSupport"].operator.execute("…")
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from bloge_config import (
    BlogeSettings,
    LoadedSettings,
    load_settings_with_sources,
    settings_file_path,
)
from bloge_container import autopilot as autopilot_wiring
from bloge_container import components, journal, mcp, rpc, store, tracing
from bloge_container.agents import load_agents
from bloge_container.injection import containers, providers
from bloge_container.report import ConditionsReport


class ApplicationContainer(containers.DeclarativeContainer):
    """The application: settings in, agents out, with a report of every wiring decision."""

    settings = providers.Dependency(instance_of=BlogeSettings)
    # Leaf key → where its value came from (LoadedSettings.sources), for `bloge config`.
    settings_sources = providers.Dependency(instance_of=dict)
    project = providers.Dependency(instance_of=components.ProjectDir)
    report = providers.Singleton(ConditionsReport)
    # What the container opened and must close (see close_container).
    closables: providers.Singleton[list[Any]] = providers.Singleton(list)

    # on-property: exactly one provider, chosen by bloge.llm.provider (Selector keys are strings).
    chosen_provider = providers.Selector(
        providers.Callable(components.record_provider_choice, settings, report),
        offline=providers.Singleton(components.offline_provider, settings, project, report),
        openai=providers.Singleton(components.openai_provider, settings),
        anthropic=providers.Singleton(components.anthropic_provider, settings),
    )
    llm_provider = providers.Singleton(
        components.aliased,
        providers.Singleton(components.routed, chosen_provider, settings, project, report),
        settings, report, closables,
    )

    # on-property: each service of bloge.rpc.services bound to the transport it names.
    rpc_services = providers.Singleton(rpc.rpc_services, settings, project, report, closables)
    # on-property: each MCP server of bloge.mcp.servers, started; its tools are operators.
    mcp_servers = providers.Singleton(mcp.mcp_servers, settings, project, report, closables)

    # The autopilot's operators (listKnobs, proposeKnobChange) when knobs are declared.
    autopilot_tools = providers.Singleton(autopilot_wiring.AutopilotTools)
    # on-property: the run store, unless bloge.store.enabled is false.
    # on-property: tracing, when bloge.tracing.enabled; the store traces the runs it records.
    run_tracing = providers.Singleton(tracing.run_tracing, settings, report, closables)
    # on-property + on-class: the journal exists only when enabled and importable.
    event_journal = providers.Singleton(
        journal.event_journal, settings, project, report, closables
    )
    journal_bridge = providers.Singleton(journal.journal_bridge, event_journal, settings)
    # The store tells a journal of its own (a file, stdout) the events of waiting calls.
    run_store = providers.Singleton(store.run_store, settings, project, report, closables,
                                    run_tracing, journal_bridge)
    # on-property: fallback models' breakers, shared through the run store when it is on.
    circuit_breaker = providers.Singleton(components.circuit_breaker, settings, run_store,
                                          report)
    # The rpc services are bound on first need (an rpc: operator; bloge serve and bloge rpc
    # ask for them): a run whose operators are all local binds none.
    operator_registry = providers.Singleton(
        autopilot_wiring.with_tools,
        providers.Singleton(components.operator_registry, settings, llm_provider, project,
                            report, rpc_services.provider, mcp_servers, circuit_breaker),
        settings, autopilot_tools, report,
    )

    # collect-all: every configured listener plus the bridge reaches every agent.
    # on-property: the error rates the autopilot's watches read, counted by a listener.
    error_rates = providers.Singleton(autopilot_wiring.error_rates, settings, report)
    listeners = providers.Singleton(
        autopilot_wiring.with_rates,
        providers.Singleton(components.listeners, settings, journal_bridge, project, report),
        error_rates,
    )

    agents = providers.Singleton(
        load_agents, settings, operator_registry, listeners, project, report, run_store
    )

    # on-property: the autopilot, when bloge.autopilot.knobs declares knobs.
    autopilot = providers.Singleton(
        autopilot_wiring.autopilot, settings, run_store, agents, chosen_provider, report,
        event_journal,
    )


def create_container(
    settings: BlogeSettings | LoadedSettings | None = None,
    *,
    project_dir: str | os.PathLike[str] | None = None,
    settings_file: str | os.PathLike[str] | None = None,
    profile: str | None = None,
) -> ApplicationContainer:
    """A container for the application in ``project_dir``, with ``settings`` or those loaded
    from its files and the environment. Components are built on first use; ``agents()``
    builds everything. ``settings_sources()`` says where each setting came from (``"code"``
    for values of ``settings`` given as ``BlogeSettings``).

    The settings file is ``settings_file``, else ``BLOGE_SETTINGS_FILE``, else
    ``settings.yaml``, a relative name taken from ``project_dir`` when given, else from the
    working directory. ``project_dir`` (where operator modules, DSL locations and the journal
    path are found) defaults to that file's folder, however it was named.
    """
    if project_dir is not None:
        project = Path(project_dir)
    else:
        project = settings_file_path(settings_file).resolve().parent
    if settings is None:
        loaded = load_settings_with_sources(settings_file=settings_file, profile=profile,
                                            base_dir=project_dir)
    elif isinstance(settings, BlogeSettings):
        loaded = LoadedSettings.in_code(settings)
    else:
        loaded = settings
    container = ApplicationContainer(settings=loaded.settings,
                                     settings_sources=dict(loaded.sources),
                                     project=components.ProjectDir(project))
    container.autopilot_tools().resolve = container.autopilot
    return container


def freeze_startup_objects() -> None:
    """What start-up made lives as long as a server or worker process: out of the
    collector's way, so that its full collections walk only what the runs make. The collector
    is on from here (``bloge``'s start-up turns it off)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.enable()


async def close_container(container: ApplicationContainer) -> None:
    """Release what the container opened: the provider's HTTP client, the journal file."""
    opened: list[Any] = container.closables()
    while opened:
        resource = opened.pop()
        close = getattr(resource, "aclose", None) or getattr(resource, "close", None)
        if close is None:
            continue
        result = close()
        if inspect.isawaitable(result):
            await result

