"""Temporal, from the settings: ``bloge worker``'s worker and ``bloge.runner: temporal``'s
runner (``bloge.temporal``; extra ``bloge[temporal]``).

A worker's providers try each call once: the model activity's retry policy, made from the
same ``bloge.llm.retry`` settings, does the retrying (a provider retrying inside an activity
that Temporal retries too would multiply the attempts).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from bloge_config import BlogeSettings, LoadedSettings
from bloge_container.budgets import (
    dropped_on_temporal,
    refuse_unkept_on_temporal,
    temporal_policy,
)
from bloge_container.errors import ConfigurationError

if TYPE_CHECKING:
    from bloge.temporal import Connection, TemporalOptions
    from bloge_container.application import ApplicationContainer


def require_extra(what: str) -> None:
    if importlib.util.find_spec("temporalio") is None:
        raise ConfigurationError(f"{what} needs temporalio: pip install 'bloge[temporal]'")


def connection(settings: BlogeSettings) -> Connection:
    from bloge.temporal import Connection

    section = settings.temporal
    return Connection(address=section.address, namespace=section.namespace, tls=section.tls,
                      tls_server_ca=section.tls_server_ca,
                      tls_client_cert=section.tls_client_cert,
                      tls_client_key=section.tls_client_key,
                      api_key=section.api_key.get_secret_value())


def options(settings: BlogeSettings) -> TemporalOptions:
    from bloge.temporal import TemporalOptions
    from bloge_container.components import retry_policy

    section = settings.temporal
    return TemporalOptions(task_queue=section.task_queue,
                           activity_timeout=section.activity_timeout,
                           heartbeat_timeout=section.heartbeat_timeout,
                           tool_attempts=section.tool_attempts,
                           workflow_task_timeout=section.workflow_task_timeout,
                           max_concurrent_activities=section.max_concurrent_activities,
                           model_retry=retry_policy(settings),
                           continue_as_new_events=section.continue_as_new_events,
                           continue_as_new_bytes=int(section.continue_as_new_bytes),
                           max_payload_bytes=int(section.max_payload_bytes))


def worker_settings(loaded: LoadedSettings) -> LoadedSettings:
    """The settings a worker's container is built with: its providers try a call once."""
    settings = loaded.settings
    retry = settings.llm.retry.model_copy(update={"max_attempts": 1})
    llm = settings.llm.model_copy(update={"retry": retry})
    return LoadedSettings(settings.model_copy(update={"llm": llm}), loaded.sources)


def served(container: ApplicationContainer, chosen: TemporalOptions,
           listeners: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Every configured agent, as a worker serves it, budgeted with ``bloge.budgets``' default
    run limits, prices and answer cap. Thread and key budgets in the settings refuse the
    worker (:class:`ConfigurationError`): its runs could not keep them."""
    from bloge.temporal import served_agents

    settings = container.settings()
    refuse_unkept_on_temporal(settings, "bloge worker")
    definitions = {agent_id: agent.definition for agent_id, agent in container.agents().items()}
    return served_agents(definitions, container.operator_registry(), chosen,
                         listeners=(*container.listeners(), *listeners),
                         budgets=temporal_policy(settings))


def budget_warnings(container: ApplicationContainer) -> list[str]:
    """What of the budgets the worker's runs do not keep, said at its start:
    ``bloge.budgets.run.time``, dropped as an agent's own ``time`` is;
    and the agents with a thread budget, whose runs the workflow refuses at their start
    (in its words)."""
    from bloge.temporal.limits import thread_budget_refusal

    warnings = [dropped] if (dropped := dropped_on_temporal(container.settings())) else []
    warnings.extend(f"{thread_budget_refusal(agent_id)} (its runs are refused at their start)"
                    for agent_id, agent in sorted(container.agents().items())
                    if agent.definition.thread_budget is not None
                    and agent.definition.thread_budget.limited)
    return warnings


def runs_store(settings: BlogeSettings, store: Any, *, listeners: tuple[Any, ...] = (),
               client: Any = None) -> Any:
    """What agent operators record their runs with: ``store`` itself, or with
    ``bloge.runner: temporal`` a store that runs each run as a workflow on the workers (and
    reads its events back from ``store``, telling ``listeners`` of their callbacks), through
    ``client`` when given (else connected on first use)."""
    if settings.runner != "temporal":
        return store
    require_extra("bloge.runner: temporal")
    from bloge.temporal.runstore import TemporalRunStore

    return TemporalRunStore(store, connection(settings), settings.temporal.task_queue,
                            workflow_task_timeout=settings.temporal.workflow_task_timeout,
                            local_model_calls=settings.temporal.local_model_calls,
                            listeners=listeners, client=client,
                            max_payload_bytes=int(settings.temporal.max_payload_bytes))
