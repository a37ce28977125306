"""``AgentActivities``: the I/O of agent workflows, performed by a worker.

A model activity calls the agent's chat operator (its streaming one for a streaming agent,
or a child workflow whose caller watches it, see :mod:`bloge.temporal.relay`: its tokens
go to the run's chunk sink); a tool activity runs one tool call through a
:class:`~bloge.agent.runtime.ToolDispatcher`, so it is checked, run and worded exactly as
in a local run (a Temporal timeout replaces the dispatcher's own); the finish activity
reports the end of the run. A recorded run's model activity gets its memory view by
reference to the thread's log (see :mod:`bloge.temporal.recording`) and reads it from the
store, so its payload holds a turn's new messages, not the whole view. Listener callbacks —
and so the journal — fire here, once per call: ``on_agent_turn_started`` on a model call's
first attempt, the others when a call completes. A tool activity that does not complete (it
timed out, or its worker died) cannot tell its end: the workflow then runs ``tool_failed``,
which does (``on_agent_tool_completed`` with the tool message the model gets, the stream's
``tool_end``). Every activity heartbeats while it runs, which is how Temporal notices a dead
worker and how a cancelled run reaches a running activity.

A run started with ``local_model_calls`` makes its model calls local activities, run by the
worker of the workflow task that asked for them, retried by that worker under the same
policy, and cancelled with the workflow. They do not heartbeat (the workflow task stands for
them: a worker that dies is noticed within ``workflow-task-timeout``), but they still renew
the run's lease in the store as often as an activity would. What changes when a worker dies
in a model call: the call's result is only recorded with the workflow task that made it, so
the next worker makes the whole call again from its first attempt, ``on_agent_turn_started``
fires again for that turn, and if the call had completed but its task had not, its
``on_agent_llm_called`` and its streamed tokens come twice (the run uses the second answer).
Tool calls are activities either way, so a tool still runs at most once when it must. And
while a local call runs, its workflow task stays open: a cancellation (like anything else
sent to the run) reaches it when the worker next reports the task, at 80 % of the
workflow task timeout, rather than at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.service import RPCError

from bloge.agent import (
    AgentCallbackContext,
    AgentStreamChunk,
    AgentUsage,
    Handoff,
    HandoffPayload,
    LlmCalledPayload,
    LoopExitedPayload,
    MemorySummarizedPayload,
    PendingCall,
    ToolCompletedPayload,
    ToolEnd,
    TurnStartedPayload,
)
from bloge.agent.runtime import (
    CHILDREN_ELSEWHERE,
    SUMMARY_LENGTH,
    ChildRunRequested,
    ChildWait,
    ListenerChain,
    ToolDispatcher,
    ToolOutcome,
    not_an_answer,
    response_of,
)
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import ProviderError
from bloge.core.repeating import repeating
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.operators import LLM_CHAT, LLM_STREAMING_CHAT
from bloge.llm.types import LlmRequest, LlmResponse
from bloge.store import StoreNotFoundError, ThreadBusyError
from bloge.temporal import wire
from bloge.temporal.catalogue import ServedAgent
from bloge.temporal.histories import (
    APPEND_ACTIVITY,
    LOG_END_ACTIVITY,
    PAYLOAD_TOO_LARGE,
    READ_ACTIVITY,
)
from bloge.temporal.options import FINAL_PROVIDER_ERROR
from bloge.temporal.recording import RunEvents, StoreRecording, numbered
from bloge.temporal.waiting import GO_ON_ACTIVITY, PAUSE_ACTIVITY
from bloge.temporal.wire import Json
from bloge.temporal.workflow import (
    BEGIN_ACTIVITY,
    FINISH_ACTIVITY,
    HANDOFF_ACTIVITY,
    MODEL_ACTIVITY,
    TOOL_ACTIVITY,
    TOOL_FAILED_ACTIVITY,
    TOOL_TIMED_OUT,
)

ChunkSink = Callable[[AgentStreamChunk], Awaitable[None]]
_log = logging.getLogger("bloge.temporal")
_NO_STORE = ("this worker keeps no run store, but its task queue's runs are recorded: give "
             "every worker of a task queue the same bloge.store settings")


class AgentActivities:
    """The activities of one worker, for the agents it serves (by id); with a
    ``recording``, every run is kept in its run store."""

    __slots__ = ("_agents", "_client", "_recording", "_watch_every")

    def __init__(self, agents: Mapping[str, ServedAgent], *,
                 recording: StoreRecording | None = None, client: Client | None = None,
                 watch_every: float = 10.0) -> None:
        """``watch_every``: how often (s) a local activity renews its run's lease (an
        activity does it with each heartbeat)."""
        self._agents = dict(agents)
        self._recording = recording
        self._client = client
        self._watch_every = watch_every

    def all(self) -> list[Callable[..., Any]]:
        return [self.begin, self.read, self.append, self.log_end, self.model, self.tool,
                self.tool_failed, self.handoff, self.finish, self.pause, self.go_on]

    def _events(self, payload: Mapping[str, Any]) -> RunEvents | None:
        if self._recording is None:
            return None
        return self._recording.events(str(payload["run_id"]),
                                      watchers=payload.get("watchers") or (),
                                      waiting=[str(run_id) for run_id
                                               in payload.get("waiting") or ()])

    async def _written(self, events: RunEvents | None, payload: Mapping[str, Any]) -> None:
        if events is None:
            return
        await events.flush()
        await self._watch(events, payload)

    async def _watch(self, events: RunEvents | None, payload: Mapping[str, Any]) -> None:
        """Renew the run's lease in the store, and those of the callers waiting on it (a
        child workflow's, see :meth:`RunEvents.renew`); when someone asked the store to
        cancel one of these runs (``bloge runs cancel``, ``POST /runs/{id}/cancel``), cancel
        that run's workflow, and so its running activities and its children's."""
        thread_id = payload.get("thread_id")
        if events is None or self._recording is None or thread_id is None:
            return
        asked = await events.renew(str(thread_id), self._recording.worker)
        if self._client is None:
            return
        for run_id in sorted(asked):
            try:
                await self._client.get_workflow_handle(run_id).cancel()
            except RPCError as error:  # it ended meanwhile; else the next renewal asks again
                _log.warning("could not cancel the workflow of run %s: %s", run_id, error)

    def _watcher(self, events: RunEvents | None,
                 payload: Mapping[str, Any]) -> Callable[[], Awaitable[None]] | None:
        if events is None:
            return None

        async def watch() -> None:
            await self._watch(events, payload)

        return watch

    @activity.defn(name=BEGIN_ACTIVITY)
    async def begin(self, payload: Json) -> Json:
        """Start a recorded run on its thread, or (``resume``) take back one that ended; a
        guest on its caller's thread (``holder`` given) joins it under the holder's hold
        instead."""
        agent = self._agent(payload)
        recording = self._recorded()
        async with _heartbeating():
            try:
                if payload.get("holder") is not None:
                    await recording.join(
                        run_id=str(payload["run_id"]), thread_id=str(payload["thread_id"]),
                        holder=str(payload["holder"]),
                        parent_run_id=str(payload["parent_run_id"]),
                        agent_id=agent.definition.id,
                        input=wire.messages_from_json(payload["input"]),
                        principal=_principal(payload.get("principal")),
                        trace_parent=payload.get("trace_parent"))
                    return {}
                return await recording.begin(
                    run_id=str(payload["run_id"]), thread_id=str(payload["thread_id"]),
                    agent_id=agent.definition.id,
                    input=wire.messages_from_json(payload["input"]),
                    metadata=payload.get("metadata") or {},
                    principal=_principal(payload.get("principal")),
                    trace_parent=payload.get("trace_parent"), tools=payload.get("tools") or (),
                    parent_run_id=payload.get("parent_run_id"),
                    resume=bool(payload.get("resume")))
            except ThreadBusyError as error:
                raise ApplicationError(str(error), type="ThreadBusyError",
                                       non_retryable=True) from None
            except StoreNotFoundError as error:  # the thread is another principal's
                raise ApplicationError(error.reason, type="StoreNotFoundError",
                                       non_retryable=True) from None

    def _agent(self, payload: Mapping[str, Any]) -> ServedAgent:
        agent_id = str(payload["agent"])
        found = self._agents.get(agent_id)
        if found is None:
            raise ApplicationError(f"this worker serves no agent {agent_id!r}",
                                   type="UnknownAgent", non_retryable=True)
        return found

    def _recorded(self) -> StoreRecording:
        if self._recording is None:
            raise ApplicationError(_NO_STORE, type="BlogeUsageError", non_retryable=True)
        return self._recording

    @activity.defn(name=READ_ACTIVITY)
    async def read(self, payload: Json) -> Json:
        """Messages of a view by reference, a page at a time (see
        :meth:`StoreRecording.read`); one message over the payload limit fails the run."""
        agent = self._agent(payload)
        max_bytes = int(payload["max_bytes"])
        async with _heartbeating():
            read = await self._recorded().read(str(payload["thread_id"]),
                                               wire.view_from_json(payload["view"]), max_bytes)
        limit = agent.plan.limits.max_payload_bytes
        if wire.size(read) <= limit:
            return read
        run_id, thread_id = str(payload["run_id"]), str(payload["thread_id"])
        seq, _ = read["messages"][0]
        problem = (f"run {run_id!r}: message {seq} of thread {thread_id!r} is over the "
                   f"{limit:,} bytes of bloge.temporal.max-payload-bytes (Temporal refuses a "
                   "payload over 2 MiB): a message that large cannot cross Temporal")
        # The run ends here, before its next turn: a message that large was written before
        # the run's workflow (the thread's earlier runs', or this run's before it was taken
        # up here). It keeps the turns and usage its record counted, as a local run does.
        recording = self._recorded()
        run = await recording.store.get_run(run_id)
        await recording.finish(
            run_id=run_id, thread_id=thread_id, messages=(), view=None, usage=run.usage,
            turns=run.turns, exit_reason="error", output=None,
            error={"type": PAYLOAD_TOO_LARGE, "message": problem})
        raise ApplicationError(problem, type=PAYLOAD_TOO_LARGE, non_retryable=True)

    @activity.defn(name=APPEND_ACTIVITY)
    async def append(self, payload: Json) -> None:
        """A recorded run's new messages, and its progress, before it continues as new; or
        only its messages (no ``turns``), before its children on its thread start: numbered
        by the run, or by the store for a guest on its caller's thread (``guest``)."""
        recording = self._recorded()
        run_id, thread_id = str(payload["run_id"]), str(payload["thread_id"])
        async with _heartbeating():
            if "guest" in payload:
                await _guest_append(recording, run_id, thread_id, payload["guest"])
                return
            kept = "turns" in payload
            await recording.append(
                run_id=run_id, thread_id=thread_id, messages=_numbered(payload["messages"]),
                turns=int(payload["turns"]) if kept else None,
                view=wire.view_from_json(payload["view"]) if kept else None,
                usage=AgentUsage.from_dict(payload["usage"]) if kept else None)

    @activity.defn(name=LOG_END_ACTIVITY)
    async def log_end(self, payload: Json) -> Json:
        """Where the thread's log goes on (``next_seq``), once a run's children on its
        thread wrote there (the store numbered their messages)."""
        async with _heartbeating():
            return {"next_seq": await self._recorded().log_end(str(payload["thread_id"]))}

    async def _messages(self, payload: Mapping[str, Any]) -> tuple[LlmMessage, ...]:
        """The model call's messages: given, or (a recorded run) the turn's new messages
        written to the thread's log and the view read back from it."""
        if "guest" in payload:  # by value, its new messages written first
            await _guest_append(self._recorded(), str(payload["run_id"]),
                                str(payload["thread_id"]), payload["guest"])
        if "view" not in payload:
            return wire.messages_from_json(payload["messages"])
        recording = self._recorded()
        run_id, thread_id = str(payload["run_id"]), str(payload["thread_id"])
        await recording.append(run_id=run_id, thread_id=thread_id,
                               messages=_numbered(payload.get("append") or ()))
        found = await recording.store.resolve_view(thread_id,
                                                   wire.view_from_json(payload["view"]))
        return tuple(item if isinstance(item, LlmMessage) else item.message for item in found)

    @activity.defn(name=MODEL_ACTIVITY)
    async def model(self, payload: Json) -> RawValue:
        agent = self._agent(payload)
        definition = agent.definition
        summary = bool(payload.get("summary"))
        # A summary of a run tells of itself; one of a run begun before summaries were the
        # run's model calls (no run named: see summary_chat) tells no one.
        told = not summary or "run_id" in payload
        messages = await self._messages(payload)
        request = (LlmRequest(str(payload["model"]), messages, payload.get("temperature"),
                              max_tokens=payload.get("max_tokens"))
                   if summary else _request(agent, payload, messages))
        ctx = OperatorContext.root(payload.get("context"), execution_id=payload.get("run_id"))
        context = _callback_context(agent, ctx)
        turn = int(payload.get("turn", 0))
        events = self._events(payload) if told else None
        if (events is not None and await events.trace(definition.model) is not None
                and not summary):
            events.model_call(turn, messages)  # the request carries the call's span
        listeners = _with(agent.listeners, events) if told else None
        if listeners and not summary and activity.info().attempt == 1:
            listeners.notify("on_agent_turn_started", context,
                             TurnStartedPayload(turn, len(messages)))
        chat = agent.registry.bound(LLM_STREAMING_CHAT if _streams(agent, payload) and not summary
                                    else LLM_CHAT)
        started = time.perf_counter()
        async with _heartbeating(self._watcher(events, payload), self._watch_every):
            try:
                response = await chat.invoke(request, ctx)
                if isinstance(response, AsyncIterator):  # streamed: its chunks joined
                    response = await response_of(response, chat.name,
                                                 None if events is None else events.chunk, turn)
            except ProviderError as error:
                if error.retryable:
                    raise
                raise ApplicationError(str(error), type=FINAL_PROVIDER_ERROR,
                                       non_retryable=True) from error
        if not isinstance(response, LlmResponse):
            raise ApplicationError(not_an_answer(chat.name, response), type="BlogeUsageError",
                                   non_retryable=True)
        latency = (time.perf_counter() - started) * 1000.0
        if listeners and summary:
            listeners.notify("on_agent_memory_summarized", context, MemorySummarizedPayload.of(
                turn, request.model, response, latency, int(payload["summarized"])))
        elif listeners:
            listeners.notify("on_agent_llm_called", context, LlmCalledPayload.of(
                turn, definition.model, response, latency))
        if events is not None and not summary:
            events.answered(response)
        await self._written(events, payload)
        return wire.encoded(wire.response_to_json(response))  # Temporal sends it as it is

    @activity.defn(name=TOOL_ACTIVITY)
    async def tool(self, payload: Json) -> Json | RawValue:
        agent = self._agent(payload)
        definition = agent.definition
        call = wire.call_from_json(payload["call"])
        turn = int(payload["turn"])
        run_id = str(payload["run_id"])
        # The same key on every attempt of this call, as in a recorded local run.
        ctx = OperatorContext(payload.get("context"), execution_id=run_id,
                              idempotency_key=f"{run_id}:{turn}:{call.id}",
                              principal=_principal(payload.get("principal")))
        events = self._events(payload)
        if events is not None:
            await events.trace(definition.model)  # what the tool calls carries its span
        # Its tools have no timeouts of their own: Temporal enforces the activity's.
        dispatcher = ToolDispatcher(agent.activity_tools, agent.registry, ctx=ctx,
                                    codec=agent.codec, listeners=_with(agent.listeners, events),
                                    context=_callback_context(agent, ctx),
                                    max_concurrency=None, default_timeout=None,
                                    sink=events.chunk if events is not None
                                    and _streams(agent, payload) else None)
        # A sub-agent call whose child the workflow runs stops at its question.
        elsewhere = CHILDREN_ELSEWHERE.set(True) if payload.get("child") else None
        try:
            # Stopped at the deadline Temporal enforces, as a local run stops a tool at its
            # timeout: a sync tool's thread is let go, and a call that ends later tells no
            # end of its own (the workflow reports the timeout, see tool_failed).
            async with _heartbeating(self._watcher(events, payload)), \
                    asyncio.timeout(_seconds_left(activity.info())):
                (outcome,) = await dispatcher.run(turn, [call])
            if outcome.waits_on is not None:
                outcome = _not_waited_on(outcome, outcome.waits_on)
        except ChildRunRequested as requested:
            # Its end is told once the child answers (see tool_failed).
            await self._written(events, payload)
            return {"child": {"agent": requested.agent_id, "question": requested.question,
                              "ceiling": requested.max_descendant_tool_calls,
                              "context": requested.context,
                              **({"thread": "parent"} if requested.thread == "parent"
                                 else {})}}
        except BaseException as stopped:
            # Cut short (timed out, cancelled): its dispatch stays in the run's events.
            await _flushed(events, call)
            if isinstance(stopped, TimeoutError):
                # Benign: the model is told; the worker logs it at DEBUG, without a traceback.
                raise ApplicationError(f"tool {call.name!r} reached its activity's deadline",
                                       type=TOOL_TIMED_OUT, non_retryable=True,
                                       category=ApplicationErrorCategory.BENIGN) from None
            raise
        finally:
            if elsewhere is not None:
                CHILDREN_ELSEWHERE.reset(elsewhere)
        await self._written(events, payload)
        return wire.outcome_encoded(outcome)

    @activity.defn(name=TOOL_FAILED_ACTIVITY)
    async def tool_failed(self, payload: Json) -> None:
        """The end of a tool activity that did not complete (it timed out, or its worker
        died), told as a local run tells a failed call: ``payload["content"]`` is the tool
        message the model gets. A sub-agent call whose child ran as a child workflow tells
        its end here too, failed or (``payload["success"]``) not."""
        agent = self._agent(payload)
        call = wire.call_from_json(payload["call"])
        turn = int(payload["turn"])
        content = str(payload["content"])
        success = bool(payload.get("success", False))
        events = self._events(payload)
        if events is not None:
            await events.trace(agent.definition.model)
        listeners = _with(agent.listeners, events)
        if listeners:
            ctx = OperatorContext.root(execution_id=str(payload["run_id"]))
            listeners.notify("on_agent_tool_completed", _callback_context(agent, ctx),
                             ToolCompletedPayload(turn, call.id, call.name, success=success,
                                                  latency_ms=float(payload["latency_ms"]),
                                                  result_summary=content[:SUMMARY_LENGTH]))
        if events is not None and _streams(agent, payload):
            await events.chunk(ToolEnd(call.name, call.id, success=success, turn_number=turn))
        await self._written(events, payload)

    @activity.defn(name=HANDOFF_ACTIVITY)
    async def handoff(self, payload: Json) -> None:
        """The run hands over from ``payload["agent"]`` to another agent, told as a local run
        tells it: ``on_agent_handoff``, the stream's ``Handoff``, the run's events, and the
        agent the run goes on with in the store."""
        agent = self._agent(payload)
        run_id = str(payload["run_id"])
        told = payload["handoff"]
        handoff = HandoffPayload(int(told["turn_number"]), str(told["handoff"]),
                                 str(told["from_agent"]), str(told["to_agent"]),
                                 str(told["tool_call_id"]), str(told.get("reason") or ""))
        events = self._events(payload)
        if events is not None:
            await events.trace(agent.definition.model)
        listeners = _with(agent.listeners, events)
        if listeners:
            ctx = OperatorContext.root(execution_id=run_id)
            listeners.notify("on_agent_handoff", _callback_context(agent, ctx), handoff)
        if events is not None and _streams(agent, payload):
            await events.chunk(Handoff(handoff.from_agent, handoff.to_agent, handoff.reason,
                                       handoff.turn_number))
        if events is None or self._recording is None:
            return
        async with _heartbeating():
            await events.flush()
            await self._recording.handed_off(run_id=run_id, agent_id=handoff.to_agent)

    @activity.defn(name=PAUSE_ACTIVITY)
    async def pause(self, payload: Json) -> Json:
        """Store the run as paused on its waiting calls: when each one expires."""
        self._agent(payload)
        calls = tuple(PendingCall(
            str(data["call_id"]), str(data["tool"]), str(data["arguments"]), data["kind"],
            str(data["hash"]), float(data["requested_at"]), data.get("expires_at"))
            for data in payload["calls"])
        async with _heartbeating():
            return await self._recorded().pause(
                run_id=str(payload["run_id"]), turn=int(payload["turn"]),
                status=str(payload["status"]), calls=calls, turns=int(payload["turns"]),
                usage=AgentUsage.from_dict(payload["usage"]),
                callers=payload.get("callers") or ())

    @activity.defn(name=GO_ON_ACTIVITY)
    async def go_on(self, payload: Json) -> None:
        """Take a paused run back in the store once its calls are decided."""
        self._agent(payload)
        async with _heartbeating():
            await self._recorded().go_on(
                run_id=str(payload["run_id"]), turn=int(payload["turn"]),
                sent=list(payload["sent"]), expired=list(payload["expired"]),
                unanswered=list(payload.get("unanswered") or ()),
                callers=payload.get("callers") or ())

    @activity.defn(name=FINISH_ACTIVITY)
    async def finish(self, payload: Json) -> None:
        agent = self._agent(payload)
        run_id = str(payload["run_id"])
        events = self._events(payload)
        if events is not None and payload.get("recorded") is not None:
            await events.trace(agent.definition.model)
        listeners = _with(agent.listeners, events)
        if listeners:
            ctx = OperatorContext.root(execution_id=run_id)
            listeners.notify("on_agent_loop_exited", _callback_context(agent, ctx),
                             LoopExitedPayload(
                                 int(payload["turns"]), int(payload["llm_calls"]),
                                 int(payload["total_tokens"]), float(payload["duration_ms"]),
                                 str(payload["exit_reason"]), payload.get("error_type"),
                                 payload.get("error_message")))
        recorded = payload.get("recorded")
        if events is None or self._recording is None or recorded is None:
            return
        async with _heartbeating():
            await events.flush()
            await self._finish(run_id, payload, recorded, events)

    async def _finish(self, run_id: str, payload: Mapping[str, Any],
                      recorded: Mapping[str, Any], events: RunEvents) -> None:
        assert self._recording is not None
        usage = recorded["usage"]
        if "guest" in recorded:  # its last messages numbered by the store, the view left
            guest = recorded["guest"]
            await self._recording.finish_guest(
                run_id=run_id, thread_id=str(payload["thread_id"]),
                holder=str(guest["holder"]), first=int(guest["first"]),
                messages=wire.messages_from_json(guest["messages"]),
                usage=AgentUsage.from_dict(usage), turns=int(payload["turns"]),
                exit_reason=str(payload["exit_reason"]), output=recorded.get("output"),
                error=recorded.get("error"), spans=events.spans)
            return
        if "transcript" in recorded:  # scheduled by a worker before runs wrote as they went
            messages, view = numbered(
                int(recorded["next_seq"]),
                [(seq, LlmMessage.from_dict(message, strict=False))
                 for seq, message in recorded["history"]],
                wire.messages_from_json(recorded["transcript"]),
                wire.messages_from_json(recorded["view"]))
        else:
            messages = _numbered(recorded["messages"])
            view = wire.view_from_json(recorded["view"])
        await self._recording.finish(
            run_id=run_id, thread_id=str(payload["thread_id"]), messages=messages, view=view,
            usage=AgentUsage.from_dict(usage),
            turns=int(payload["turns"]), exit_reason=str(payload["exit_reason"]),
            output=recorded.get("output"), error=recorded.get("error"), spans=events.spans,
            checkpoint_turns=(None if recorded.get("checkpoint_turns") is None
                              else int(recorded["checkpoint_turns"])))


async def _guest_append(recording: StoreRecording, run_id: str, thread_id: str,
                        guest: Mapping[str, Any]) -> None:
    """Write a guest run's new messages (see ``GuestLog.append``), numbered by the store."""
    try:
        await recording.append_guest(run_id=run_id, thread_id=thread_id,
                                     holder=str(guest["holder"]), first=int(guest["first"]),
                                     messages=wire.messages_from_json(guest["messages"]))
    except ThreadBusyError as error:  # its caller's hold is gone: retrying will not help
        raise ApplicationError(str(error), type="ThreadBusyError",
                               non_retryable=True) from None


def _numbered(pairs: Sequence[Sequence[Any]]) -> list[tuple[int, LlmMessage]]:
    """``[seq, message]`` pairs a workflow numbered."""
    return [(int(seq), LlmMessage.from_dict(message, strict=False)) for seq, message in pairs]


def _streams(agent: ServedAgent, payload: Mapping[str, Any]) -> bool:
    """Whether the run's chunks are kept: it streams, or (a child workflow) a caller watches
    it (``payload["watchers"]``, see :mod:`bloge.temporal.relay`)."""
    return agent.definition.streaming or bool(payload.get("watchers"))


def _principal(data: Any) -> Principal | None:
    """The principal a start payload carries (see ``workflow.start_payload``), if any."""
    if not isinstance(data, dict):
        return None
    return Principal(str(data["name"]), admin=bool(data.get("admin")))


def _with(listeners: ListenerChain, events: RunEvents | None) -> ListenerChain:
    """The agent's listeners, then the run's events in the store, if it is kept there."""
    if events is None:
        return listeners
    return listeners.then(events.listener)


async def _flushed(events: RunEvents | None, call: ToolCall) -> None:
    """Write what ``events`` kept of a call cut short; a failure to is logged, so that what
    cut the call short is what the activity reports."""
    if events is None:
        return
    try:
        await events.flush()
    except Exception:  # noqa: BLE001 -- the store's trouble must not hide why the call stopped
        _log.warning("could not record the events of tool call %s", call.id, exc_info=True)


def _seconds_left(info: activity.Info) -> float | None:
    """How long this attempt may still run: to the nearer of its start-to-close and
    schedule-to-close deadlines (``None``: neither is set)."""
    deadlines = [start + timeout for start, timeout in (
        (info.started_time, info.start_to_close_timeout),
        (info.scheduled_time, info.schedule_to_close_timeout)) if timeout]
    if not deadlines:
        return None
    return max(0.0, (min(deadlines) - datetime.now(UTC)).total_seconds())


def _request(agent: ServedAgent, payload: Mapping[str, Any],
             messages: tuple[LlmMessage, ...]) -> LlmRequest:
    """A turn's request, as the run's engine makes it (its engine's tools and handoffs, then
    the run's own, a /v1 client's; its typed answer's request), with the ``max_tokens`` its
    workflow reserved for: the agent's, else its budget's answer cap (the agent's in the
    payload of a workflow begun before workflows sent theirs), and the fallback models its
    budget lets it ask (the agent's, unless the payload names fewer)."""
    definition, engine = agent.definition, agent.engine()
    run_tools = payload.get("tools")
    return LlmRequest(
        str(payload["model"]), messages, payload.get("temperature"),
        max_tokens=payload.get("max_tokens", definition.max_tokens), stop=definition.stop,
        tools=(*engine.tool_definitions, *map(wire.tool_from_json, run_tools)) if run_tools
        else engine.tool_definitions,
        tool_choice=definition.tool_choice, seed=definition.seed,
        parallel_tool_calls=definition.parallel_tool_calls, output=engine.output_request,
        fallback=tuple(payload.get("fallback", definition.fallback)),
        cache_key=str(payload.get("thread_id") or "") or None)


def _callback_context(agent: ServedAgent, ctx: OperatorContext) -> AgentCallbackContext:
    return AgentCallbackContext(ctx.execution_id, ctx.graph_name, ctx.node_id,
                                agent.definition.id)


@contextlib.asynccontextmanager
async def _heartbeating(watch: Callable[[], Awaitable[None]] | None = None,
                        every: float | None = None) -> AsyncIterator[None]:
    """Heartbeat three times per heartbeat timeout while the body runs (from a third of it
    on), and ``watch`` the run in the store as often; an activity without a heartbeat
    timeout (a local one) only watches, ``every`` so many seconds."""
    timeout = activity.info().heartbeat_timeout
    beats = bool(timeout)
    interval = timeout.total_seconds() / 3 if timeout else every
    if interval is None or not (beats or watch is not None):
        yield
        return

    async def beat() -> None:
        if beats:
            activity.heartbeat()
        if watch is not None:
            try:
                await watch()
            except Exception:  # noqa: BLE001 -- the store's trouble must not fail the call
                _log.warning("could not renew the run's lease in the store", exc_info=True)

    # The first beat after an interval, not at once: the heartbeat timeout counts from the
    # start, and a call shorter than that (most are) costs the service no heartbeat.
    async with repeating(interval, beat):
        yield


def _not_waited_on(outcome: ToolOutcome, wait: ChildWait) -> ToolOutcome:
    """The outcome of a call whose sub-agent's run paused: a workflow does not wait on its
    sub-agents' runs yet, so the model is told, and the sub-agent's run waits by itself."""
    return replace(outcome, waits_on=None, content=(
        f"Error: sub-agent run {wait.run_id} ({wait.tool}) did not answer: it is "
        f"{wait.status.replace('_', ' ')}; a run on Temporal does not wait on it, and it goes "
        "on by itself once its calls are answered, without answering this call"))
