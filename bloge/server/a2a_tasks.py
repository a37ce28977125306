"""Runs as A2A tasks: a run's record as a task, its events as a task's stream events."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import ParseDict

from bloge.a2a.parts import message
from bloge.store import Run, RunEvent, RunStatus

#: The artifact a task's answer is in.
ANSWER = "answer"

#: A run's status as a task's state.
STATES = {
    RunStatus.QUEUED: pb.TASK_STATE_SUBMITTED,
    RunStatus.RUNNING: pb.TASK_STATE_WORKING,
    RunStatus.SUCCEEDED: pb.TASK_STATE_COMPLETED,
    RunStatus.FAILED: pb.TASK_STATE_FAILED,
    RunStatus.CANCELLED: pb.TASK_STATE_CANCELED,
    # A run whose worker stopped: it ended for its client, and the runs API resumes it.
    RunStatus.INTERRUPTED: pb.TASK_STATE_FAILED,
    RunStatus.AWAITING_APPROVAL: pb.TASK_STATE_INPUT_REQUIRED,
    RunStatus.AWAITING_TOOL_RESULTS: pb.TASK_STATE_INPUT_REQUIRED,
}
#: The states a task ends in.
ENDED = frozenset({pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED, pb.TASK_STATE_CANCELED,
                    pb.TASK_STATE_REJECTED})


def submitted(run_id: str, thread_id: str, text: str) -> pb.Task:
    """The task of run ``run_id`` just started on ``text``."""
    return pb.Task(id=run_id, context_id=thread_id,
                   status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                   history=[message(text, context_id=thread_id, task_id=run_id)])


async def updates(run_id: str, thread_id: str,
                  events: AsyncIterator[RunEvent]) -> AsyncGenerator[Any, None]:
    """The run's events (``events``) as A2A stream events, the last one final."""
    streamed = False
    async for event in events:
        match event.type:
            case "token":
                yield pb.TaskArtifactUpdateEvent(
                    task_id=run_id, context_id=thread_id, append=streamed,
                    artifact=pb.Artifact(artifact_id=ANSWER, name=ANSWER,
                                         parts=[pb.Part(text=event.body["text"])]))
                streamed = True
            case "tool_start" | "tool_end":
                yield pb.TaskStatusUpdateEvent(
                    task_id=run_id, context_id=thread_id,
                    status=pb.TaskStatus(state=pb.TASK_STATE_WORKING),
                    metadata=_struct({"bloge_event": event.type, **event.body}))
            case "done" | "error" | "approval_required" | "tool_results_required" | "paused":
                for update in _last(run_id, thread_id, event, streamed=streamed):
                    yield update
                return


def _last(run_id: str, thread_id: str, event: RunEvent, *,
          streamed: bool) -> list[pb.TaskArtifactUpdateEvent | pb.TaskStatusUpdateEvent]:
    """How a stream ends: the answer (whole, unless its tokens were streamed) and the final
    status."""
    body = event.body
    updates: list[pb.TaskArtifactUpdateEvent | pb.TaskStatusUpdateEvent] = []
    if event.type == "done":
        content = body.get("content") or ""
        if not streamed:
            updates.append(pb.TaskArtifactUpdateEvent(
                task_id=run_id, context_id=thread_id, last_chunk=True,
                artifact=pb.Artifact(artifact_id=ANSWER, name=ANSWER,
                                     parts=[pb.Part(text=content)])))
        state, said = pb.TASK_STATE_COMPLETED, content
    elif event.type == "error":
        state = (pb.TASK_STATE_CANCELED if body.get("exit_reason") == "cancelled"
                 else pb.TASK_STATE_FAILED)
        said = f"run {run_id} failed: {body.get('error_message') or body.get('exit_reason')}"
    else:
        state, said = pb.TASK_STATE_INPUT_REQUIRED, _waits(run_id)
    updates.append(pb.TaskStatusUpdateEvent(
        task_id=run_id, context_id=thread_id,
        status=pb.TaskStatus(state=state, message=message(
            said, role=pb.ROLE_AGENT, context_id=thread_id, task_id=run_id))))
    return updates


def task_of(run: Run, history: int | None = None) -> pb.Task:
    """Run ``run`` as an A2A task: its state, its answer (an artifact, and the status
    message) or why it has none, the messages it was asked."""
    state = STATES[run.status]
    output: Mapping[str, Any] = run.output or {}
    content = str(output.get("content") or "")
    if run.status is RunStatus.SUCCEEDED:
        said = content
    elif state == pb.TASK_STATE_INPUT_REQUIRED:
        said = _waits(run.id)
    elif run.error is not None:
        said = f"run {run.id} failed: {run.error.message}"
    elif run.status is RunStatus.INTERRUPTED:
        said = (f"run {run.id} was interrupted (its worker stopped); POST /runs/{run.id}/resume "
                "continues it")
    else:
        said = f"run {run.id} is {run.status.value}"
    answer = pb.Message(message_id=f"{run.id}-answer", role=pb.ROLE_AGENT,
                        context_id=run.thread_id, task_id=run.id, parts=[pb.Part(text=said)])
    task = pb.Task(id=run.id, context_id=run.thread_id,
                   status=pb.TaskStatus(state=state, message=answer))
    task.status.timestamp.FromMilliseconds(int(run.updated_at * 1000))
    if run.status is RunStatus.SUCCEEDED:
        parts = [pb.Part(text=content)]
        if output.get("output") is not None:  # a typed answer: its data too
            parts.append(pb.Part(data=ParseDict(output["output"], pb.Part().data)))
        task.artifacts.append(pb.Artifact(artifact_id=ANSWER, name=ANSWER, parts=parts))
    asked = [message(m.content, context_id=run.thread_id, task_id=run.id)
             for m in run.input if isinstance(m.content, str)]
    kept = [*asked, answer] if state in ENDED else asked
    task.history.extend(kept if history is None else kept[-history:])
    return task


def _waits(run_id: str) -> str:
    return (f"run {run_id} waits for a person's approval or for tool results: see GET "
            f"/runs/{run_id} (its pending_approvals) and decide them with POST /runs/{run_id}"
            "/approvals/{call_id} or POST /runs/{run_id}/tool-results")


def _struct(values: Mapping[str, Any]) -> Any:
    found = pb.TaskStatusUpdateEvent().metadata
    found.update(json.loads(json.dumps(values, default=str)))
    return found
