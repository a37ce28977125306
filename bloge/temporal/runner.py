"""``TemporalRunner``: start agent runs as workflows and wait for their outputs.

A run's workflow id is its run id. A failure comes back as bloge's own error: running out
of turns as ``MaxTurnsExceededError`` with its checkpoint, any other failure of the loop as
``AgentRunError`` with its checkpoint, a cancelled run as ``RunCancelledError``.

With ``local_model_calls`` the runs it starts make their model calls local activities (see
:mod:`bloge.temporal.workflow`): a round trip through the service less per turn; a worker
that dies in a model call then leaves the whole call to be made again (see
:mod:`bloge.temporal.activities`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.errors import AgentRunError, MaxTurnsExceededError
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.errors import RunError
from bloge.llm.messages import LlmMessage
from bloge.temporal import wire
from bloge.temporal.workflow import MAX_TURNS_ERROR, RUN_ERROR, WORKFLOW, start_payload


class RunCancelledError(RunError):
    """The run's workflow was cancelled (or terminated) before it finished."""

    def __init__(self, message: str, *, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(message)


class TemporalRunner:
    """Runs agents on the workers of ``task_queue``."""

    __slots__ = ("client", "local_model_calls", "task_queue", "workflow_task_timeout")

    def __init__(self, client: Client, task_queue: str, *,
                 workflow_task_timeout: float = 10.0, local_model_calls: bool = False) -> None:
        self.client = client
        self.task_queue = task_queue
        self.workflow_task_timeout = workflow_task_timeout
        self.local_model_calls = local_model_calls

    async def start(self, agent_id: str, input: Any = None, *, run_id: str | None = None,
                    thread_id: str | None = None, history: Sequence[LlmMessage] | None = None,
                    checkpoint: AgentCheckpoint | None = None, max_turns: int | None = None,
                    context: Mapping[str, Any] | None = None) -> WorkflowHandle[Any, Any]:
        """Start a run of ``agent_id`` (``input`` as ``AgentInput.of`` takes it); its
        workflow id is ``run_id`` (a new id when ``None``)."""
        payload = start_payload(agent_id,
                                input=None if input is None else AgentInput.of(input),
                                history=history, checkpoint=checkpoint, max_turns=max_turns,
                                context=context, thread_id=thread_id,
                                local_model_calls=self.local_model_calls)
        return await self.client.start_workflow(
            WORKFLOW, payload, id=run_id or uuid.uuid4().hex, task_queue=self.task_queue,
            task_timeout=timedelta(seconds=self.workflow_task_timeout))

    async def run(self, agent_id: str, input: Any = None, **options: Any) -> AgentOutput:
        """Start a run (see :meth:`start`) and wait for its output."""
        handle = await self.start(agent_id, input, **options)
        return await self.result(handle.id)

    async def result(self, run_id: str) -> AgentOutput:
        """The output of run ``run_id``, waiting for it; its failure raised as bloge's."""
        handle = self.client.get_workflow_handle(run_id)
        try:
            data = await handle.result()
        except WorkflowFailureError as failure:
            raise _error(run_id, failure.cause) from None
        return wire.output_from_json(data)

    async def cancel(self, run_id: str) -> None:
        """Ask run ``run_id`` to stop: its workflow and its running activities are cancelled."""
        await self.client.get_workflow_handle(run_id).cancel()


def _error(run_id: str, cause: BaseException) -> BaseException:
    if isinstance(cause, ApplicationError) and cause.type in (MAX_TURNS_ERROR, RUN_ERROR):
        details = list(cause.details)
        agent_id = str(details[0])
        checkpoint = AgentCheckpoint.from_json(DEFAULT_CODEC.encode(details[2]))
        error: AgentRunError
        if cause.type == MAX_TURNS_ERROR:
            error = MaxTurnsExceededError(agent_id=agent_id, max_turns=int(details[1]),
                                          checkpoint=checkpoint)
        else:
            error = AgentRunError(cause.message, agent_id=agent_id, checkpoint=checkpoint,
                                  exit_reason=str(details[1]))
        error.run_id = run_id
        return error
    if isinstance(cause, (CancelledError, TerminatedError)):
        return RunCancelledError(f"run {run_id!r} was cancelled", run_id=run_id)
    return RunError(f"run {run_id!r} failed: {cause}")
