"""``TemporalOptions``: the knobs of a worker, and what they make of each agent's calls.

The DSL maps onto Temporal's own knobs. A model call is an activity whose retry policy is
the provider's (``bloge.llm.retry``: attempts, backoff; a provider error that says it is
not worth retrying is not retried), bounded by ``activity_timeout``. A tool call is an
activity bounded by the tool's ``timeout``, else the agent's ``tool_timeout`` (for all its
attempts together), else ``activity_timeout`` (for each); it is tried ``tool_attempts``
times when its operator declares itself idempotent, once otherwise. Every activity
heartbeats, so that one whose worker died is noticed within ``heartbeat_timeout`` and handed
to another worker (or, for a tool that must not run twice, reported to the model as having
an unknown outcome).

A run may make its model calls local activities instead (``local_model_calls``, chosen by
whoever starts the run: see :class:`~bloge.temporal.runner.TemporalRunner`): the worker runs
each one inside the workflow task that asked for it, with the same timeout and retry policy
but without heartbeats, which saves a round trip through the service per turn.

A long run continues as new (a fresh workflow history, the same workflow id) at the start of
a turn once Temporal suggests it, or once its history holds ``continue_as_new_events``
events or ``continue_as_new_bytes`` bytes; at least one turn runs in each history. No payload
a run hands to Temporal (an activity's input, the state it continues with, its output) may
exceed ``max_payload_bytes``: with a run store, the memory view goes by reference to the
thread's log; without one, a run that would pass the limit fails naming itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio.common import RetryPolicy as ActivityRetryPolicy

from bloge.agent import AgentDef, AgentToolRef, SubAgentTool
from bloge.core.errors import BlogeUsageError
from bloge.core.operator import operator_metadata
from bloge.core.registry import OperatorRegistry
from bloge.llm.providers.retry import RetryPolicy

#: The error type of a provider failure that must not be retried.
FINAL_PROVIDER_ERROR = "FinalProviderError"
#: The largest payload a run hands to Temporal by default: the service refuses one over
#: 2 MiB (its ``limit.blobSize.error``), and this leaves room for the payload's metadata.
MAX_PAYLOAD_BYTES = 2_000_000
#: The smallest ``max_payload_bytes``: a turn's messages must fit.
MIN_PAYLOAD_BYTES = 16 * 1024


@dataclass(frozen=True, slots=True)
class TemporalOptions:
    """How a worker runs agents (settings ``bloge.temporal``, ``bloge.llm.retry``)."""

    task_queue: str = "bloge"
    activity_timeout: float = 600.0
    heartbeat_timeout: float = 30.0
    tool_attempts: int = 3
    workflow_task_timeout: float = 10.0
    max_concurrent_activities: int = 100
    model_retry: RetryPolicy = field(default_factory=RetryPolicy)
    continue_as_new_events: int = 10_000
    continue_as_new_bytes: int = 20 * 1024 * 1024
    max_payload_bytes: int = MAX_PAYLOAD_BYTES

    def __post_init__(self) -> None:
        if not self.task_queue:
            raise BlogeUsageError("a Temporal task queue needs a name")
        for name in ("activity_timeout", "heartbeat_timeout", "workflow_task_timeout"):
            if not getattr(self, name) > 0:
                raise BlogeUsageError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.tool_attempts < 1 or self.max_concurrent_activities < 1:
            raise BlogeUsageError("tool_attempts and max_concurrent_activities must be >= 1")
        for name in ("continue_as_new_events", "continue_as_new_bytes"):
            if getattr(self, name) < 0:
                raise BlogeUsageError(f"{name} must be >= 0 (0: only when Temporal suggests "
                                      f"it), got {getattr(self, name)!r}")
        if self.max_payload_bytes < MIN_PAYLOAD_BYTES:
            raise BlogeUsageError(f"max_payload_bytes must be >= {MIN_PAYLOAD_BYTES}, got "
                                  f"{self.max_payload_bytes!r}")


@dataclass(frozen=True, slots=True)
class RunLimits:
    """When a run's workflow continues as new, and the largest payload it hands to Temporal
    (see :class:`TemporalOptions`); every worker of a task queue must agree on them."""

    continue_as_new_events: int = 10_000
    continue_as_new_bytes: int = 20 * 1024 * 1024
    max_payload_bytes: int = MAX_PAYLOAD_BYTES


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """One tool's activity: its timeout (``None``: only ``activity_timeout`` bounds it),
    whether it may run again, and the keyword arguments of ``execute_activity``; ``child``:
    the agent a sub-agent tool asks (its calls' runs are child workflows)."""

    timeout: float | None
    idempotent: bool
    activity: dict[str, Any]
    child: str | None = None


@dataclass(frozen=True, slots=True)
class ActivityPlan:
    """The activity options of one agent's model calls (as activities, and as local
    activities) and of each of its tools."""

    model: dict[str, Any]
    tools: dict[str, ToolPlan]
    finish: dict[str, Any]
    local_model: dict[str, Any]
    limits: RunLimits = field(default_factory=RunLimits)


def plan_for(definition: AgentDef, registry: OperatorRegistry,
             options: TemporalOptions) -> ActivityPlan:
    heartbeat = timedelta(seconds=options.heartbeat_timeout)
    retry = options.model_retry
    model = {
        "start_to_close_timeout": timedelta(seconds=options.activity_timeout),
        "heartbeat_timeout": heartbeat,
        "retry_policy": ActivityRetryPolicy(
            initial_interval=timedelta(seconds=max(retry.initial_backoff, 0.001)),
            backoff_coefficient=max(retry.multiplier, 1.0),
            maximum_interval=timedelta(seconds=max(retry.max_backoff, retry.initial_backoff,
                                                   0.001)),
            maximum_attempts=retry.max_attempts,
            non_retryable_error_types=[FINAL_PROVIDER_ERROR, "BlogeUsageError"],
        ),
    }
    # An external tool runs nowhere: its calls wait for their results.
    tools = {tool.name: _tool_plan(tool, definition, registry, options) for tool in
             definition.tools if not tool.external}
    # The run's start and end in the store (and the end's listener callback): short, and
    # safe to repeat.
    finish = {"start_to_close_timeout": timedelta(seconds=options.activity_timeout),
              "heartbeat_timeout": heartbeat,
              "retry_policy": ActivityRetryPolicy(maximum_attempts=options.tool_attempts)}
    # A local activity has no heartbeat: its worker's workflow task stands for it.
    local_model = {key: value for key, value in model.items() if key != "heartbeat_timeout"}
    limits = RunLimits(options.continue_as_new_events, options.continue_as_new_bytes,
                       options.max_payload_bytes)
    return ActivityPlan(model, tools, finish, local_model, limits)


def _tool_plan(tool: AgentToolRef, definition: AgentDef, registry: OperatorRegistry,
               options: TemporalOptions) -> ToolPlan:
    timeout = tool.timeout if tool.timeout is not None else definition.tool_timeout
    operator = registry.get(tool.operator_ref)
    idempotent = operator_metadata(operator).idempotent
    bound = timeout if timeout is not None else options.activity_timeout
    activity: dict[str, Any] = {
        "start_to_close_timeout": timedelta(seconds=bound),
        "heartbeat_timeout": timedelta(seconds=min(options.heartbeat_timeout, bound)),
        "retry_policy": ActivityRetryPolicy(
            maximum_attempts=options.tool_attempts if idempotent else 1),
    }
    if timeout is not None:
        # The tool's timeout bounds the call whichever workers try it: a call that timed
        # out is not tried again, one whose worker died is, within what is left of it.
        activity["schedule_to_close_timeout"] = timedelta(seconds=timeout)
    child = operator.agent.agent_def.id if isinstance(operator, SubAgentTool) else None
    return ToolPlan(timeout, idempotent, activity, child)
