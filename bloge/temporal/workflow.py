"""``AgentWorkflow``: one workflow type that runs any agent a worker serves.

The workflow runs the engine's own loop (:class:`~bloge.agent.loop.engine.AgentEngine`):
its decisions — the steps of :mod:`bloge.agent.loop.steps`, the memory, the exit condition,
the turn cap — are made here, deterministically, and replayed after a crash; its I/O is
handed to activities through :class:`ActivityEffects`: each model call and each tool call is
one activity (:mod:`bloge.temporal.activities`), and so is the end of the run, where the
worker notifies ``on_agent_loop_exited``. The workflow's engine has no listeners and no
observer, so nothing in replayed code notifies anyone.

A run started with ``local_model_calls`` makes each model call a local activity: the worker
that runs the workflow task performs the call within it, and the result is recorded with the
task's completion, so a turn costs one round trip through the service (the tool round)
instead of two. The choice is in the run's start input, so it holds for the run's whole
life, whatever the settings of the workers that replay it. Memory summaries stay activities.

A run that runs out of turns fails with an ``ApplicationError`` of type
``MaxTurnsExceededError`` whose details are the agent id, ``max_turns`` and the checkpoint's
JSON; any other failure of the loop is an ``AgentRunError`` with the checkpoint likewise.
:class:`~bloge.temporal.runner.TemporalRunner` turns both back into bloge's errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutType
from temporalio.exceptions import CancelledError as ActivityCancelledError
from temporalio.exceptions import TimeoutError as ActivityTimeoutError

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.engine import ModelCall, ToolRound
from bloge.agent.loop.errors import AgentRunError, MaxTurnsExceededError
from bloge.agent.loop.observer import RecordedResult
from bloge.agent.loop.records import AgentInput, AgentOutput, AgentUsage
from bloge.agent.loop.tools import ToolOutcome
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import OperatorContext
from bloge.core.masking import mask_credentials
from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmRequest, LlmResponse
from bloge.temporal import catalogue, wire
from bloge.temporal.catalogue import ServedAgent
from bloge.temporal.wire import Json

WORKFLOW = "bloge.agent"
MODEL_ACTIVITY = "bloge.model"
TOOL_ACTIVITY = "bloge.tool"
FINISH_ACTIVITY = "bloge.finish"
BEGIN_ACTIVITY = "bloge.begin"
TOOL_FAILED_ACTIVITY = "bloge.tool_failed"
#: The error type of a tool activity that stopped its call at its deadline.
TOOL_TIMED_OUT = "ToolTimedOut"
#: The error type Temporal gives an activity its worker's shutdown cut short.
WORKER_SHUTDOWN = "WorkerShutdown"
#: The patch that reports a tool activity that did not complete (workflows begun before it
#: replay without that activity).
REPORT_FAILED_TOOLS = "bloge.report-failed-tools"
MAX_TURNS_ERROR = "MaxTurnsExceededError"
RUN_ERROR = "AgentRunError"


@workflow.defn(name=WORKFLOW)
class AgentWorkflow:
    """Runs ``start["agent"]`` from ``start`` (see :func:`start_payload`); returns the
    output's JSON (:meth:`AgentOutput.to_dict`)."""

    @workflow.run
    async def run(self, start: Json) -> Json:
        info = workflow.info()
        agent_id = str(start["agent"])
        agent = catalogue.find(info.task_queue, agent_id)
        if agent is None:
            raise ApplicationError(
                f"no agent {agent_id!r} on task queue {info.task_queue!r} (it serves: "
                f"{', '.join(catalogue.known(info.task_queue)) or 'none'})",
                type="UnknownAgent", non_retryable=True)
        run_id = info.workflow_id
        values = dict(start.get("context") or {})
        thread_id = start.get("thread_id")
        checkpoint = start.get("checkpoint")
        history = start.get("history")
        begun = None
        if agent.recorded:  # the run store keeps the run, on its thread
            thread_id = thread_id or workflow.uuid4().hex
            begun = await workflow.execute_activity(BEGIN_ACTIVITY, {
                "agent": agent_id, "run_id": run_id, "thread_id": thread_id,
                "input": start.get("input") or [],
                "metadata": {"workflow_id": run_id, "task_queue": info.task_queue},
            }, **agent.plan.finish)
            if checkpoint is None:
                history = [message for _, message in begun["history"]]
        effects = ActivityEffects(agent, run_id, values, thread_id, begun,
                                  local_model_calls=bool(start.get("local_model_calls")))
        ctx = OperatorContext.root(values, execution_id=run_id)
        engine = agent.engine(start.get("max_turns"))
        messages = start.get("input")
        started = workflow.time()
        try:
            output = await engine.run(
                AgentInput(wire.messages_from_json(messages)) if messages else None, ctx,
                checkpoint=(AgentCheckpoint.from_json(DEFAULT_CODEC.encode(checkpoint))
                            if checkpoint is not None else None),
                history=wire.messages_from_json(history) if history else None,
                effects=effects)
        except MaxTurnsExceededError as error:
            await effects.finish(error.checkpoint, "max_turns", started, error)
            raise ApplicationError(str(error), error.agent_id, error.max_turns,
                                   DEFAULT_CODEC.decode(error.checkpoint.to_json()),
                                   type=MAX_TURNS_ERROR, non_retryable=True) from None
        except AgentRunError as error:
            await effects.finish(error.checkpoint, error.exit_reason, started,
                                 error.__cause__ or error)
            raise ApplicationError(mask_credentials(str(error)), error.agent_id,
                                   error.exit_reason,
                                   DEFAULT_CODEC.decode(error.checkpoint.to_json()),
                                   type=RUN_ERROR, non_retryable=True) from None
        except asyncio.CancelledError as cancelled:
            cause = cancelled.__cause__
            if isinstance(cause, AgentRunError):
                await effects.finish(cause.checkpoint, "cancelled", started, cause)
            raise
        named = _named(output, run_id, thread_id)
        await effects.finish(output.checkpoint, output.exit_reason, started, None, named)
        return wire.output_to_json(named)


def start_payload(agent_id: str, *, input: AgentInput | None = None,
                  history: Sequence[Any] | None = None,
                  checkpoint: AgentCheckpoint | None = None, max_turns: int | None = None,
                  context: Mapping[str, Any] | None = None,
                  thread_id: str | None = None, local_model_calls: bool = False) -> Json:
    """What :class:`AgentWorkflow` starts from: JSON data only (``context`` too)."""
    return {
        "agent": agent_id,
        "input": None if input is None else wire.messages_to_json(input.messages),
        "history": None if history is None else wire.messages_to_json(history),
        "checkpoint": None if checkpoint is None else DEFAULT_CODEC.decode(checkpoint.to_json()),
        "max_turns": max_turns,
        "context": dict(context or {}),
        "thread_id": thread_id,
        "local_model_calls": local_model_calls,
    }


def _named(output: AgentOutput, run_id: str, thread_id: str | None) -> AgentOutput:
    return replace(output, run_id=run_id, thread_id=thread_id)


class ActivityEffects:
    """The engine's I/O as activities: a model call per turn, a tool call per activity (at
    most ``max_tool_concurrency`` of a round at once), in the order the model asked; with
    ``local_model_calls``, a model call is a local activity."""

    __slots__ = ("_agent", "_begun", "_local", "_run_id", "_thread_id", "_values")

    def __init__(self, agent: ServedAgent, run_id: str, values: Mapping[str, Any],
                 thread_id: str | None = None, begun: Json | None = None, *,
                 local_model_calls: bool = False) -> None:
        self._agent = agent
        self._run_id = run_id
        self._values = values
        self._thread_id = thread_id
        self._begun = begun
        self._local = local_model_calls

    @property
    def call_model(self) -> ModelCall:
        return self._call_model

    @property
    def tools(self) -> ToolRound:
        return self

    async def _call_model(self, request: LlmRequest, turn: int) -> LlmResponse:
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id, "turn": turn,
                   "thread_id": self._thread_id, "model": request.model,
                   "temperature": request.temperature,
                   "messages": wire.messages_to_json(request.messages),
                   "context": self._values}
        try:
            if self._local:
                result = await workflow.execute_local_activity(MODEL_ACTIVITY, payload,
                                                               **self._agent.plan.local_model)
            else:
                result = await workflow.execute_activity(MODEL_ACTIVITY, payload,
                                                         **self._agent.plan.model)
        except ActivityError as error:
            _raise_if_cancelled(error)
            raise
        return wire.response_from_json(result)

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        cap = self._agent.definition.max_tool_concurrency
        limit = asyncio.Semaphore(cap) if cap and cap < len(calls) else None

        async def one(call: ToolCall) -> ToolOutcome:
            if limit is None:
                return await self._call_tool(turn, call)
            async with limit:
                return await self._call_tool(turn, call)

        return list(await asyncio.gather(*(one(call) for call in calls)))

    async def _call_tool(self, turn: int, call: ToolCall) -> ToolOutcome:
        plan = self._agent.plan.tools.get(call.name)
        # An unknown tool: the worker's dispatcher words the error, as a local run does.
        options = self._agent.plan.finish if plan is None else plan.activity
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id, "turn": turn,
                   "thread_id": self._thread_id, "call": wire.call_to_json(call),
                   "context": self._values}
        started = workflow.time()
        try:
            result = await workflow.execute_activity(TOOL_ACTIVITY, payload, **options)
        except ActivityError as error:
            _raise_if_cancelled(error)
            outcome = _failed(call, error, plan.timeout if plan else None,
                              idempotent=plan.idempotent if plan else False)
            if workflow.patched(REPORT_FAILED_TOOLS):
                await self._report_failed(payload, outcome, started)
            return outcome
        return wire.outcome_from_json(call, result)

    async def _report_failed(self, payload: Json, outcome: ToolOutcome, started: float) -> None:
        """Tell the end of a tool activity that could not (it timed out, its worker died), as
        a local run's dispatcher would: on_agent_tool_completed, the stream's tool_end, the
        run's events in the store. The run goes on if that fails: the model has its answer."""
        try:
            await workflow.execute_activity(TOOL_FAILED_ACTIVITY, {
                **payload, "content": outcome.content,
                "latency_ms": (workflow.time() - started) * 1000.0,
            }, **self._agent.plan.finish)
        except ActivityError as error:
            _raise_if_cancelled(error)
            workflow.logger.warning("run %s: the end of tool call %s could not be told: %s",
                                    self._run_id, outcome.call.id, error.cause or error)

    async def finish(self, checkpoint: AgentCheckpoint, exit_reason: str, started: float,
                     error: BaseException | None, output: AgentOutput | None = None) -> None:
        """The end of the run, reported from an activity (``on_agent_loop_exited``, and the
        run's end in the store)."""
        usage: AgentUsage = checkpoint.usage
        recorded = None
        if self._begun is not None:
            transcript = output.messages if output is not None else checkpoint.conversation
            recorded = {
                **self._begun,
                "transcript": wire.messages_to_json(transcript),
                "view": wire.messages_to_json(checkpoint.conversation),
                "usage": usage.to_dict(),
                "output": (None if output is None
                           else output.to_dict(messages=False, checkpoint=False)),
                "error": None if error is None else {
                    "type": type(error).__name__, "message": mask_credentials(str(error))},
            }
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id,
                   "thread_id": self._thread_id, "recorded": recorded,
                   "turns": checkpoint.turn_count, "llm_calls": usage.llm_calls,
                   "total_tokens": usage.total_tokens,
                   "duration_ms": (workflow.time() - started) * 1000.0,
                   "exit_reason": exit_reason,
                   "error_type": None if error is None else type(error).__name__,
                   "error_message": None if error is None else mask_credentials(str(error))}
        await workflow.execute_activity(FINISH_ACTIVITY, payload, **self._agent.plan.finish)


def _raise_if_cancelled(error: ActivityError) -> None:
    """A call cancelled with its workflow: the run is cancelled (as a local run's task is),
    not failed by that call."""
    if isinstance(error.cause, ActivityCancelledError):
        raise asyncio.CancelledError(str(error.cause)) from error


def _failed(call: ToolCall, error: ActivityError, timeout: float | None, *,
            idempotent: bool) -> ToolOutcome:
    """A tool activity that did not complete, as the tool message a local run would give."""
    cause = error.cause
    timed_out = cause.type if isinstance(cause, ActivityTimeoutError) else None
    # Its worker died (no heartbeat), or was stopped before the call returned.
    worker_stopped = timed_out is TimeoutType.HEARTBEAT or (
        isinstance(cause, ApplicationError) and cause.type == WORKER_SHUTDOWN)
    if worker_stopped and not idempotent:
        problem = (f"the outcome of tool {call.name!r} is unknown: its worker stopped while it "
                   "ran, and it was not run again because its operator is not idempotent; "
                   "check whether it took effect before calling it again")
    elif timed_out in (TimeoutType.START_TO_CLOSE, TimeoutType.SCHEDULE_TO_CLOSE) or (
            isinstance(cause, ApplicationError) and cause.type == TOOL_TIMED_OUT):
        bound = "" if timeout is None else f" after {timeout:g} s"
        problem = f"tool {call.name!r} timed out{bound}"
    else:
        problem = f"tool {call.name!r} failed: {mask_credentials(str(cause or error))}"
    return ToolOutcome(call, success=False, content=f"Error: {problem}")


def summary_chat(agent_id: str, options: Mapping[str, Any]) -> Any:
    """The chat a ``summary(n)`` memory summarizes with inside a workflow: a model activity
    (without tools, and notifying no listener: it is the memory's call, not a turn)."""

    async def chat(request: LlmRequest) -> LlmResponse:
        payload = {"agent": agent_id, "summary": True, "model": request.model,
                   "temperature": request.temperature,
                   "messages": wire.messages_to_json(request.messages), "context": {}}
        result = await workflow.execute_activity(MODEL_ACTIVITY, payload, **options)
        return wire.response_from_json(result)

    return chat
