"""``agent_worker``: a Temporal worker that runs agent workflows and their activities.

The workflow sandbox re-imports a workflow's modules for each run to keep them from sharing
state; bloge's own modules are passed through instead (they are imported once, outside),
both because the workflow must find the worker's agents (:mod:`bloge.temporal.catalogue`)
and because the engine's modules hold nothing a run could leak into another.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge.agent import (
    AgentDef,
    AgentExecutionListener,
    AgentMemoryStrategy,
    BudgetPolicy,
)
from bloge.core.registry import OperatorRegistry
from bloge.store import Store
from bloge.temporal import catalogue
from bloge.temporal.activities import AgentActivities
from bloge.temporal.catalogue import ServedAgent, served
from bloge.temporal.options import TemporalOptions
from bloge.temporal.recording import StoreRecording
from bloge.temporal.workflow import AgentWorkflow, WorkflowSummarizer, summary_chat

#: Modules a workflow shares with its worker instead of importing them afresh.
PASSED_THROUGH = ("bloge", "pydantic", "pydantic_core", "structlog", "orjson", "lark", "httpx",
                  "tenacity", "yaml")


def served_agents(definitions: Mapping[str, AgentDef], registry: OperatorRegistry,
                  options: TemporalOptions, *,
                  listeners: Sequence[AgentExecutionListener] = (),
                  budgets: BudgetPolicy | None = None) -> dict[str, ServedAgent]:
    """What a worker needs of each agent; a ``summary(n)`` memory summarizes through a model
    activity. ``budgets``: the deployment's budget policy (``bloge.budgets``), of which the
    runs keep the default run limits but ``time``, the prices and the answer cap (see
    :func:`~bloge.temporal.limits.kept_policy`); give every worker of a task queue the same."""
    agents: dict[str, ServedAgent] = {}
    for agent_id, definition in definitions.items():
        probe = served(definition, registry, options, listeners=listeners)
        summarizer = None
        if isinstance(definition.memory_strategy, AgentMemoryStrategy.Summary):
            summarizer = WorkflowSummarizer(
                summary_chat(definition.id, probe.plan.model,
                             probe.plan.limits.max_payload_bytes), definition.model)
        agents[agent_id] = served(definition, registry, options, listeners=listeners,
                                  summarizer=summarizer, budgets=budgets)
    return agents


@contextlib.asynccontextmanager
async def agent_worker(client: Client, agents: Mapping[str, ServedAgent],
                       options: TemporalOptions, *, store: Store | None = None,
                       identity: str | None = None) -> AsyncIterator[Worker]:
    """A worker for ``agents`` on ``options.task_queue``, polling while the block runs;
    leaving the block shuts it down, letting running activities finish within
    ``heartbeat_timeout``. With a ``store``, every run is kept there (its workflow id is its
    run id); every worker of a task queue must agree on that."""
    recording = None
    if store is not None:
        recording = StoreRecording(store, worker=f"temporal:{options.task_queue}")
    agents = {agent_id: replace(agent, recorded=recording is not None)
              for agent_id, agent in agents.items()}
    catalogue.file(options.task_queue, agents)
    activities = AgentActivities(agents, recording=recording, client=client,
                                 watch_every=options.heartbeat_timeout / 3)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    worker = Worker(
        client,
        task_queue=options.task_queue,
        workflows=[AgentWorkflow],
        activities=activities.all(),
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        max_concurrent_activities=options.max_concurrent_activities,
        sticky_queue_schedule_to_start_timeout=timedelta(
            seconds=min(options.workflow_task_timeout, 10.0)),
        graceful_shutdown_timeout=timedelta(seconds=options.heartbeat_timeout),
        identity=identity,
    )
    try:
        async with worker:
            yield worker
    finally:
        catalogue.withdraw(options.task_queue, list(agents))
