"""How each component is built from the settings, recording every decision in the report.

These are plain functions; :mod:`bloge_container.application` wires them as dependency-injector
providers. Each mirrors one of Spring's conditional registrations: on-property (the provider
choice, the journal), on-class (a component whose module cannot be imported is skipped),
on-missing-bean (a user's own ``llmChat`` replaces ours) and collect-all (every listener).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bloge import (
    AgentExecutionListener,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorRegistry,
)
from bloge.core.entry_points import entry_points
from bloge.core.operator import bind
from bloge.llm import LLM_CHAT, LLM_STREAMING_CHAT, LlmProvider
from bloge.llm.aliases import ModelAliases
from bloge_config import BlogeSettings
from bloge_container.errors import ConfigurationError
from bloge_container.imports import instantiate, resolve
from bloge_container.report import ConditionsReport

OPERATOR_ENTRY_POINTS = "bloge.operators"
PROVIDERS = ("offline", "openai", "anthropic")


@dataclass(frozen=True, slots=True)
class ProjectDir:
    """The directory relative paths of the settings are resolved against."""

    path: Path


def record_provider_choice(settings: BlogeSettings, report: ConditionsReport) -> str:
    """The provider key for the container's selector, each choice recorded."""
    chosen = settings.llm.provider
    for name in PROVIDERS:
        report.record(f"LlmProvider[{name}]", registered=name == chosen, kind="on-property",
                      reason=f"bloge.llm.provider is {chosen!r}")
    if chosen in ("openai", "anthropic"):
        pool = ConnectionPool.of(settings, chosen)
        report.record(f"LlmConnectionPool[{chosen}]", registered=True, kind="on-property",
                      reason=pool.reason)
    return chosen


@dataclass(frozen=True, slots=True)
class ConnectionPool:
    """The connection pool of a provider's HTTP client, from ``bloge.llm.<provider>`` and,
    where that says nothing, ``bloge.server.max-concurrent-runs`` (each run holds at most one
    model call at a time, so that many runs never wait for a connection)."""

    max_connections: int
    max_keepalive_connections: int
    reason: str

    @classmethod
    def of(cls, settings: BlogeSettings, provider: str) -> ConnectionPool:
        section = settings.llm.openai if provider == "openai" else settings.llm.anthropic
        key = f"bloge.llm.{provider}"
        most, keep = section.max_connections, section.max_keepalive_connections
        if most is None:
            most = settings.server.max_concurrent_runs
            why = f"{key}.max-connections unset: bloge.server.max-concurrent-runs"
        else:
            why = f"{key}.max-connections"
        kept = most if keep is None else keep
        return cls(most, kept, f"at most {most} connections ({why}), {kept} kept alive")

    def limits(self) -> Any:
        import httpx

        return httpx.Limits(max_connections=self.max_connections,
                            max_keepalive_connections=self.max_keepalive_connections)


SWITCH_TO_A_REAL_MODEL = (
    "For open-ended answers, switch to a real model: set bloge.llm.provider to openai or "
    "anthropic (for example BLOGE_LLM__PROVIDER=openai) and set its API key (OPENAI_API_KEY or "
    "ANTHROPIC_API_KEY)."
)


def offline_provider(
    settings: BlogeSettings, project: ProjectDir, report: ConditionsReport
) -> LlmProvider:
    """The offline model with the application's hooks (``bloge.llm.offline``), telling its
    users how this application's settings switch to a real model."""
    from bloge.llm.offline import OfflineProvider

    section = settings.llm.offline
    return OfflineProvider(
        answer_formatters=_offline_hooks("answer-formatters", section.answer_formatters,
                                         project, report),
        argument_fillers=_offline_hooks("argument-fillers", section.argument_fillers,
                                        project, report),
        switch_hint=SWITCH_TO_A_REAL_MODEL,
    )


def _offline_hooks(
    setting: str, paths: tuple[str, ...], project: ProjectDir, report: ConditionsReport
) -> list[Any]:
    hooks = []
    for index, path in enumerate(paths):
        key = f"bloge.llm.offline.{setting}[{index}]"
        hook = instantiate(resolve(path, key=key, project_dir=project.path), key=key)
        if not callable(hook):
            raise ConfigurationError(f"{key}: {path!r} is not callable")
        hooks.append(hook)
        report.record(f"OfflineHook[{path}]", registered=True, kind="collect-all",
                      reason=f"{key} names it")
    return hooks


def openai_provider(settings: BlogeSettings) -> LlmProvider:
    from bloge.llm.providers import OpenAIChatProvider

    section = settings.llm.openai
    key = section.api_key.get_secret_value()
    if not key:
        raise ConfigurationError(
            "bloge.llm.provider is 'openai' but no API key is set: export OPENAI_API_KEY or set "
            "bloge.llm.openai.api-key (BLOGE_LLM__OPENAI__API_KEY); for a local OpenAI-compatible "
            "server that needs no key, set the key to any placeholder such as 'none'"
        )
    return OpenAIChatProvider(base_url=str(section.base_url), api_key=key,
                              organization=section.organization, max_tokens=section.max_tokens,
                              timeout=section.timeout,
                              max_response_bytes=int(section.max_response_bytes),
                              retry=retry_policy(settings),
                              limits=ConnectionPool.of(settings, "openai").limits(),
                              output_mode=settings.output.mode,
                              prompt_cache_key=section.prompt_cache_key)


def anthropic_provider(settings: BlogeSettings) -> LlmProvider:
    from bloge.llm.providers import AnthropicProvider

    section = settings.llm.anthropic
    key = section.api_key.get_secret_value()
    if not key:
        raise ConfigurationError(
            "bloge.llm.provider is 'anthropic' but no API key is set: export ANTHROPIC_API_KEY "
            "or set bloge.llm.anthropic.api-key (BLOGE_LLM__ANTHROPIC__API_KEY)"
        )
    return AnthropicProvider(base_url=str(section.base_url), api_key=key,
                             version=section.version, max_tokens=section.max_tokens,
                             timeout=section.timeout,
                             max_response_bytes=int(section.max_response_bytes),
                             retry=retry_policy(settings),
                             limits=ConnectionPool.of(settings, "anthropic").limits(),
                             output_mode=settings.output.mode,
                             prompt_caching=section.prompt_caching)


def retry_policy(settings: BlogeSettings) -> Any:
    from bloge.llm.providers import RetryPolicy

    retry = settings.llm.retry
    return RetryPolicy(max_attempts=retry.max_attempts, initial_backoff=retry.initial_backoff,
                       multiplier=retry.multiplier, max_backoff=retry.max_backoff,
                       retry_on_status=tuple(retry.on_http_codes),
                       max_retry_after=retry.max_retry_after, total_timeout=retry.total_timeout)


def routed(
    provider: LlmProvider, settings: BlogeSettings, project: ProjectDir, report: ConditionsReport
) -> LlmProvider:
    """The chosen provider, or a router sending the models ``bloge.llm.routes`` names to
    their providers (each built once) and the others to the chosen one."""
    routes = settings.llm.routes
    report.record("ModelRouter", registered=bool(routes), kind="on-property",
                  reason=(f"bloge.llm.routes routes {len(routes)} model pattern(s)" if routes
                          else "bloge.llm.routes is empty"))
    if not routes:
        return provider
    from bloge.llm.routing import ModelRouter

    built: dict[str, LlmProvider] = {settings.llm.provider: provider}
    for name in routes.values():
        if name not in built:
            built[name] = (openai_provider(settings) if name == "openai"
                           else anthropic_provider(settings) if name == "anthropic"
                           else offline_provider(settings, project, report))
    return ModelRouter({pattern: built[name] for pattern, name in routes.items()},
                       default=provider)


def circuit_breaker(settings: BlogeSettings, store: Any, report: ConditionsReport) -> Any:
    """The circuit breaker of every agent's fallback models: in the run store when
    ``bloge.llm.fallback.shared`` and a store is enabled, else in this process."""
    from bloge.llm.breaker import CircuitBreaker

    section = settings.llm.fallback
    states = None
    if section.shared and store is not None:
        from bloge.store import StoreBreakerStates

        states = StoreBreakerStates(store)
    report.record("CircuitBreakerStates[store]", registered=states is not None,
                  kind="on-property",
                  reason=("bloge.llm.fallback.shared and the run store is enabled: every "
                          "worker on the store shares the breakers" if states is not None
                          else "each process keeps its own breakers (bloge.llm.fallback.shared "
                          "is false, or the run store is disabled)"))
    return CircuitBreaker(failures=section.breaker_failures,
                          cooldown=section.breaker_cooldown, states=states)


def aliased(
    provider: LlmProvider, settings: BlogeSettings, report: ConditionsReport, closables: list[Any]
) -> LlmProvider:
    """The chosen provider, renaming models when ``bloge.llm.model-aliases`` says so."""
    closables.append(provider)
    aliases = settings.llm.model_aliases
    report.record("ModelAliases", registered=bool(aliases), kind="on-property",
                  reason=(f"bloge.llm.model-aliases maps {len(aliases)} model(s)" if aliases
                          else "bloge.llm.model-aliases is empty"))
    return ModelAliases(provider, aliases) if aliases else provider


def operator_registry(
    settings: BlogeSettings,
    provider: LlmProvider,
    project: ProjectDir,
    report: ConditionsReport,
    rpc_services: Callable[[], Any] | None = None,
    mcp_servers: Any = None,
    breaker: Any = None,
) -> OperatorRegistry:
    """Operators advertised by installed packages, then the configured ones (which win), then
    the tools of ``mcp_servers`` (a tool renamed to a configured name replaces it), then the
    chat operators unless the user registered their own under those names. A configured
    ``rpc:<service>/<method>`` is a remote operator over the services ``rpc_services()``
    binds, called only then: binding them builds their implementations and transports."""
    operators: dict[str, Any] = {}
    for entry in sorted(entry_points(group=OPERATOR_ENTRY_POINTS), key=lambda e: e.name):
        try:
            operators[entry.name] = instantiate(entry.load(), key=f"entry point {entry.name!r}")
        except (ImportError, AttributeError, ConfigurationError) as exc:
            report.record(f"Operator[{entry.name}]", registered=False, kind="on-class",
                          reason=f"entry point {entry.value!r} does not load: {exc}")
            continue
        report.record(f"Operator[{entry.name}]", registered=True, kind="on-class",
                      reason=f"advertised through the {OPERATOR_ENTRY_POINTS!r} entry points")
    for name, path in settings.operators.items():
        key = f"bloge.operators.{name}"
        if path.startswith("rpc:"):
            if rpc_services is None:
                raise ConfigurationError(f"{key}: {path!r} needs the rpc services")
            operators[name] = rpc_services().remote_operator(name, path)
            report.record(f"Operator[{name}]", registered=True, kind="always",
                          reason=f"{key} is {path!r}: it runs where that service is bound")
            continue
        target = instantiate(resolve(path, key=key, project_dir=project.path), key=key)
        operators[name] = _operator(name, target, key=key)
        report.record(f"Operator[{name}]", registered=True, kind="always",
                      reason=f"{key} is {path!r}")
    if mcp_servers is not None:
        for name, operator in mcp_servers.operators().items():
            if name in operators and name not in settings.operators:
                raise ConfigurationError(
                    f"bloge.mcp.servers.{operator.connection.name}: its tool "
                    f"{operator.tool.name!r} would be registered as {name!r}, which is taken; "
                    f"rename it (bloge.mcp.servers.{operator.connection.name}.rename)")
            if name in operators:
                report.record(f"Operator[{name}]", registered=False, kind="on-property",
                              reason=f"replaced by the MCP tool {operator.connection.name}."
                                     f"{operator.tool.name} renamed to it")
            operators[name] = operator
    for name, make in ((LLM_CHAT, LlmChatOperator), (LLM_STREAMING_CHAT, LlmStreamingChatOperator)):
        if name in operators:
            report.record(name, registered=False, kind="on-missing-bean",
                          reason=f"the application registers its own operator {name!r}")
            continue
        operators[name] = make(provider, breaker=breaker,
                               fallback_attempts=settings.llm.fallback.attempts_before_failover)
        report.record(name, registered=True, kind="on-missing-bean",
                      reason=f"no operator named {name!r} is configured")
    return OperatorRegistry(operators)


def _operator(name: str, target: Any, *, key: str) -> Any:
    """``target``, when it can be an operator; else a ``ConfigurationError`` naming ``key``."""
    try:
        bind(name, target)
    except TypeError as exc:
        raise ConfigurationError(f"{key}: {exc}") from exc
    return target


def listeners(
    settings: BlogeSettings,
    journal_bridge: AgentExecutionListener | None,
    project: ProjectDir,
    report: ConditionsReport,
) -> tuple[AgentExecutionListener, ...]:
    """Every configured listener and the journal bridge when enabled: all reach every agent."""
    collected: list[AgentExecutionListener] = []
    for index, path in enumerate(settings.listeners):
        key = f"bloge.listeners[{index}]"
        listener = instantiate(resolve(path, key=key, project_dir=project.path), key=key)
        if not isinstance(listener, AgentExecutionListener) and not _listens(listener):
            raise ConfigurationError(f"{key}: {path!r} is not an AgentExecutionListener")
        collected.append(listener)
        report.record(f"Listener[{path}]", registered=True, kind="collect-all",
                      reason=f"{key} names it")
    if journal_bridge is not None:
        collected.append(journal_bridge)
    return tuple(collected)


def _listens(candidate: object) -> bool:
    return any(callable(getattr(candidate, name, None)) for name in (
        "on_agent_turn_started", "on_agent_llm_called", "on_agent_tool_dispatched",
        "on_agent_tool_completed", "on_agent_loop_exited"))


def journal_available() -> str | None:
    """Why the journal cannot be built (a missing module), or ``None`` when it can."""
    for module in ("structlog", "bloge.journal"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


def secret_values(settings: BlogeSettings) -> tuple[str, ...]:
    keys = (settings.llm.openai.api_key.get_secret_value(),
            settings.llm.anthropic.api_key.get_secret_value(),
            *(service.api_key.get_secret_value() for service in settings.rpc.services.values()),
            *(value.get_secret_value() for server in settings.mcp.servers.values()
              for value in (*server.headers.values(), *server.env.values())))
    return tuple(key for key in keys if key)

