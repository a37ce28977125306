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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    TerminatedError,
)

from bloge.agent import (
    AgentCheckpoint,
    AgentInput,
    AgentOutput,
    AgentRunError,
    Decision,
    MaxTurnsExceededError,
)
from bloge.core import tracecontext
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import Principal
from bloge.core.errors import BlogeUsageError, RunError
from bloge.core.ids import new_id
from bloge.llm.messages import LlmMessage
from bloge.llm.types import ToolDefinition
from bloge.store import RunStatus, Store, StoreNotFoundError
from bloge.temporal import wire
from bloge.temporal.options import MAX_PAYLOAD_BYTES
from bloge.temporal.patches import current_memo
from bloge.temporal.waiting import ANSWER_SIGNAL, LIMITS_SIGNAL
from bloge.temporal.wire import View
from bloge.temporal.workflow import MAX_TURNS_ERROR, RUN_ERROR, WORKFLOW, start_payload


class RunCancelledError(RunError):
    """The run's workflow was cancelled (or terminated) before it finished."""

    def __init__(self, message: str, *, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(message)


class TemporalRunner:
    """Runs agents on the workers of ``task_queue``. A recorded run's output may hold its
    messages and its checkpoint's view by reference to its thread (it continued as new, or
    they would pass the payload limit): with the workers' ``store``, they are read back;
    without, they are left empty. A start over ``max_payload_bytes`` is refused here, naming
    the run."""

    __slots__ = ("client", "local_model_calls", "max_payload_bytes", "store", "task_queue",
                 "workflow_task_timeout")

    def __init__(self, client: Client, task_queue: str, *,
                 workflow_task_timeout: float = 10.0, local_model_calls: bool = False,
                 store: Store | None = None,
                 max_payload_bytes: int = MAX_PAYLOAD_BYTES) -> None:
        self.client = client
        self.task_queue = task_queue
        self.workflow_task_timeout = workflow_task_timeout
        self.local_model_calls = local_model_calls
        self.store = store
        self.max_payload_bytes = max_payload_bytes

    async def start(self, agent_id: str, input: Any = None, *, run_id: str | None = None,
                    thread_id: str | None = None, history: Sequence[LlmMessage] | None = None,
                    checkpoint: AgentCheckpoint | None = None, max_turns: int | None = None,
                    context: Mapping[str, Any] | None = None,
                    principal: Principal | None = None,
                    tools: Sequence[ToolDefinition] = (),
                    budget: Mapping[str, Any] | None = None,
                    resume: bool = False) -> WorkflowHandle[Any, Any]:
        """Start a run of ``agent_id`` (``input`` as ``AgentInput.of`` takes it); its
        workflow id is ``run_id`` (a new id when ``None``). A recorded run and its new
        thread belong to ``principal`` (see :class:`~bloge.core.context.Principal`);
        ``tools``: the run's own external tools (see ``RunStart.tools``); ``budget``: its
        run budget's limits raised or set (``{"tokens": 80000}``; not ``time``, which a
        workflow does not keep). With ``resume``, recorded run ``run_id``, which ended
        (failed, out of turns, cancelled), is taken back and goes on from its checkpoint
        in the workers' run store, on its thread: a new execution of its workflow id,
        which Temporal allows once the last one closed."""
        payload = start_payload(agent_id,
                                input=None if input is None else AgentInput.of(input),
                                history=history, checkpoint=checkpoint, max_turns=max_turns,
                                context=context, thread_id=thread_id,
                                local_model_calls=self.local_model_calls, principal=principal,
                                trace_parent=_caller(), tools=tools, budget=budget,
                                resume=resume)
        run_id = run_id or new_id()
        size = wire.size(payload)
        if size > self.max_payload_bytes:
            raise BlogeUsageError(
                f"run {run_id!r}: its start (input, history, checkpoint) would be {size:,} "
                f"bytes, over the {self.max_payload_bytes:,} of bloge.temporal.max-payload-bytes"
                " (Temporal refuses a payload over 2 MiB); keep the conversation on a thread of "
                "the run store (bloge.store) instead of passing it")
        return await self.client.start_workflow(
            WORKFLOW, payload, id=run_id, task_queue=self.task_queue,
            task_timeout=timedelta(seconds=self.workflow_task_timeout), memo=current_memo())

    async def run(self, agent_id: str, input: Any = None, **options: Any) -> AgentOutput:
        """Start a run (see :meth:`start`) and wait for its output."""
        handle = await self.start(agent_id, input, **options)
        return await self.result(handle.id)

    async def result(self, run_id: str) -> AgentOutput:
        """The output of run ``run_id``, waiting for it; its failure raised as bloge's. A
        cancelled recorded run's :class:`RunCancelledError` has for its ``__cause__`` the
        ``AgentRunError`` a local run's cancellation carries (exit reason ``cancelled``,
        its checkpoint as the store kept it), when the workers' ``store`` recorded it."""
        handle = self.client.get_workflow_handle(run_id)
        try:
            data = await handle.result()
        except WorkflowFailureError as failure:
            error = _error(run_id, failure.cause)
            if isinstance(error, RunCancelledError) and self.store is not None:
                raise error from await self._cancelled(run_id)
            if isinstance(error, AgentRunError) and self.store is not None:
                stored = _stored(failure.cause)
                if stored is not None:
                    view = await self._resolved(stored["thread_id"], stored["view"])
                    error.checkpoint = replace(error.checkpoint, conversation=view)
            raise error from None
        output = wire.output_from_json(data)
        stored = data.get("stored")
        if stored is None or self.store is None:
            return output
        return replace(output,
                       messages=await self._resolved(output.thread_id, stored["transcript"]),
                       checkpoint=replace(output.checkpoint, conversation=await self._resolved(
                           output.thread_id, stored["view"])))

    async def _cancelled(self, run_id: str) -> AgentRunError | None:
        """What run ``run_id``'s workflow recorded of its cancellation in the store: its
        error, with its last checkpoint; ``None`` when it recorded none."""
        assert self.store is not None
        try:
            run = await self.store.get_run(run_id)
        except StoreNotFoundError:
            return None
        checkpoint = await self.store.latest_checkpoint(run_id)
        if run.status is not RunStatus.CANCELLED or checkpoint is None:
            return None
        conversation = await self._read(run.thread_id, checkpoint.view)
        message = (run.error.message if run.error is not None
                   else f"agent {run.agent!r} was cancelled in turn {run.turns}")
        error = AgentRunError(message, agent_id=run.agent, exit_reason="cancelled",
                              checkpoint=AgentCheckpoint(conversation, checkpoint.turn, {},
                                                         run.agent, checkpoint.usage))
        error.run_id = run_id
        error.thread_id = run.thread_id
        return error

    async def _resolved(self, thread_id: str | None,
                        view: Sequence[Any]) -> tuple[LlmMessage, ...]:
        """A view by reference to ``thread_id``'s log, read from the store."""
        if thread_id is None:
            return ()
        return await self._read(thread_id, wire.view_from_json(view))

    async def _read(self, thread_id: str, view: View) -> tuple[LlmMessage, ...]:
        """The messages of ``view``, read from ``thread_id``'s log in the store."""
        assert self.store is not None
        found = await self.store.resolve_view(thread_id, view)
        return tuple(item if isinstance(item, LlmMessage) else item.message for item in found)

    async def answer(self, run_id: str, decisions: Mapping[str, Decision],
                     results: Mapping[str, tuple[str, bool]] | None = None, *,
                     turn: int | None = None) -> None:
        """Send run ``run_id``, which waits, ``decisions`` and the ``results`` of external
        calls (the tool message, whether it is text) by call id (taken in the store first:
        see :mod:`bloge.temporal.waiting`), for its round of ``turn``: a round of another
        turn drops them."""
        told = {} if turn is None else {"turn": turn}
        answers: dict[str, Any] = {
            call_id: {"approved": decision.approved, "reason": decision.reason,
                      "principal": decision.principal, **told}
            for call_id, decision in decisions.items()}
        answers.update((call_id, {"result": content, "text": text, **told})
                       for call_id, (content, text) in (results or {}).items())
        await self.client.get_workflow_handle(run_id).signal(ANSWER_SIGNAL, answers)

    async def limit(self, run_id: str, *, max_turns: int | None = None,
                    budget: Mapping[str, Any] | None = None, turn: int | None = None) -> None:
        """Give run ``run_id``, which waits, new limits for when it goes on: ``max_turns``,
        and its run budget's limits raised or set to ``budget``'s. Sent before the answers
        that let it go on (see :mod:`bloge.temporal.waiting`), for its round of ``turn``: a
        round of another turn drops them."""
        limits: dict[str, Any] = {} if turn is None else {"turn": turn}
        if max_turns is not None:
            limits["max_turns"] = max_turns
        if budget:
            limits["budget"] = dict(budget)
        await self.client.get_workflow_handle(run_id).signal(LIMITS_SIGNAL, limits)

    async def cancel(self, run_id: str) -> None:
        """Ask run ``run_id`` to stop: its workflow and its running activities are cancelled."""
        await self.client.get_workflow_handle(run_id).cancel()


def _stored(cause: BaseException | None) -> Any:
    """The view by reference of a failed run's checkpoint that was too large to carry."""
    if isinstance(cause, ApplicationError) and len(cause.details) > 3:
        return cause.details[3]
    return None


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
            error = (wire.budget_stop_from_json(details[4:], agent_id=agent_id,
                                                checkpoint=checkpoint)
                     or AgentRunError(cause.message, agent_id=agent_id,
                                      checkpoint=checkpoint, exit_reason=str(details[1])))
        error.run_id = run_id
        return error
    if isinstance(cause, (CancelledError, TerminatedError)):
        return RunCancelledError(f"run {run_id!r} was cancelled", run_id=run_id)
    # An activity's own failure says what went wrong, not "Activity task failed".
    while isinstance(cause, ActivityError) and cause.cause is not None:
        cause = cause.cause
    return RunError(f"run {run_id!r} failed: {cause}")


def _caller() -> str | None:
    """The trace context the run is started in (a request ``bloge serve`` traces), kept."""
    caller = tracecontext.caller.get()
    return None if caller is None else caller.stored()
