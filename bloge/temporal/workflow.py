"""``AgentWorkflow``: one workflow type that runs any agent a worker serves.

The workflow runs the engine's own loop (:class:`~bloge.agent.runtime.AgentEngine`): its
decisions — the steps of :mod:`bloge.agent.loop.steps`, the memory, the exit condition, the
turn cap — are made here, deterministically, and replayed after a crash; its I/O is handed
to activities through :class:`ActivityEffects`: each model call and each tool call is one
activity (:mod:`bloge.temporal.activities`), and so is the end of the run, where the worker
notifies ``on_agent_loop_exited``. The workflow's engine has no listeners, and its observer
(:class:`~bloge.temporal.histories.Turns`) only keeps count, so nothing in replayed code
notifies anyone.

A run started with ``local_model_calls`` makes each model call a local activity: the worker
that runs the workflow task performs the call within it, and the result is recorded with the
task's completion, so a turn costs one round trip through the service (the tool round)
instead of two. The choice is in the run's start input, so it holds for the run's whole
life, whatever the settings of the workers that replay it. Memory summaries stay activities.

A long run continues as new (see :class:`~bloge.temporal.options.TemporalOptions`): at the
start of a turn after its history's first, once Temporal suggests it or the history reached
``continue_as_new_events`` or ``continue_as_new_bytes``, the engine is stopped there (by the
workflow's observer, :class:`~bloge.temporal.histories.Turns`) and the workflow continues as
new with the run's state: its turns, usage and last tool results, its view and its
transcript — by reference to the thread's log for a recorded run (whose messages the
activities write as it goes, see :mod:`bloge.temporal.recording`), by value otherwise. Each
history starts from that state, so the run's output, record, listeners and checkpoint are
those of one run. No payload the workflow hands Temporal may exceed ``max_payload_bytes``: a
recorded run's model calls carry the view by reference, and a run that would pass the limit
anyway fails with an ``ApplicationError`` of type ``PayloadTooLarge`` naming the run, before
Temporal refuses it.

A recorded run whose tool call waits for approval, or for a result posted from outside (an
external tool, or a tool of the run's own such as a ``/v1`` client's), pauses: it is stored
as waiting and its workflow waits for the answers, holding no worker
(:mod:`bloge.temporal.waiting`).

A recorded run that ended without succeeding (out of turns, failed, cancelled) is resumed by
a new execution of its workflow id whose start says ``resume``: its first activity takes the
run back in the store (:meth:`~bloge.temporal.recording.StoreRecording.take_up`), and it goes
on from its last checkpoint there, its view read from the thread's log by reference, as a
later history goes on from what the last one carried. A run that ended in the middle of a tool
round keeps the checkpoint from before the round, of the turn before (``ROUND_CHECKPOINTS``),
as a local run does: the round is asked of the model again in its own turn.

A sub-agent call (``tool research : agent researcher``, ``Agent.as_tool()``) of an agent the
task queue serves runs its child as a child workflow: the call's tool activity only works out
the question (its arguments checked, its ``input { … }`` evaluated), then the workflow starts
the child's run, whose workflow id (and run id) derives from the caller's run, turn and call
id, and waits for it holding no activity slot. The child is recorded with the caller's run as
its ``parent_run_id``; its answer is the call's result, its failure the call's error. A
replayed caller finds its children's starts and ends in its history: a finished child is not
run again, a running one is waited for.
A child that pauses (a call of its own waits for approval or a posted result, see
:mod:`bloge.temporal.waiting`) waits for its decisions, and its callers — its start names them,
nearest first — are paused in the store with it, showing its waiting calls, and taken back
when it goes on; their workflows only wait on their children, as they did.
A child shares its callers' budgets and the run tree's tool-call ceiling
(:mod:`bloge.temporal.shares`): its start says what they allow it, its end what it spent.
Its start also says how many of its callers watch its chunks (``watched_by``, see
:mod:`bloge.temporal.relay`): its activities then stream, and keep its chunks in those
callers' events too. A ``context = "parent"`` sub-agent's child starts from the caller's
conversation as its model saw it at the call (kept by :class:`Turns`, workflow state), then
the question; a start that would pass the payload limit is the call's error instead.

A caller waiting on its child runs no activity, and so renews no lease in the store: the
child's model and tool activities renew its callers' leases with its own (their payloads
name them, ``waiting``), as an in-process caller's process keeps its lease while its
sub-agent runs. So a caller that waits longer than a lease is not taken for interrupted, nor
its thread taken by another run (nor, for a child on that thread, from under the child); and
a cancel asked of the caller in the store reaches the caller's workflow (which cancels its
children), not the child's. Only the payloads change: histories begun before replay.

A ``thread = "parent"`` sub-agent's child runs on its caller's thread (see
:mod:`bloge.agent.caller_thread`), a guest under the hold of the run that holds it (its start
names that ``holder``). Of the two ways to share one message sequence between workflows —
the caller handing each child a range of numbers, or the store numbering a guest's messages
as they are written — this takes the second: a range would have to guess how many messages
a child (and its own children) will write, and leave gaps in the thread's numbers; the store
already numbers a Temporal run's events so (:class:`~bloge.store.ops.AppendRunEvents`).
So a guest's activities write its messages numbered by the store, under the thread's row
lock (:class:`~bloge.temporal.histories.GuestLog`); the caller writes the messages that ask
(its answer) before its children start, and once its round is done an activity tells it
where the log ends, from where it numbers its own again (``_caught_up``): numbers that come
from the store reach the workflow only as activity results, so a replay gets the same ones.
A guest's model calls carry its conversation by value; it never moves the thread's view, and
does not continue as new. Only a round that asks such a child issues these commands (its
tool activity's result says so), so histories begun before replay as they ran.

A handoff (``handoff billing : agent billingAgent``) goes on with the other agent's engine,
linked from the agents the task queue serves (the same on every replay, as the agent itself
is found): its model and tool calls are that agent's activities from then on, and the handoff
activity tells the handoff (``on_agent_handoff``, the stream, the run's events and its
current agent in the store). A handoff to an agent the task queue does not serve fails the
run at its start, naming it.

A run that runs out of turns fails with an ``ApplicationError`` of type
``MaxTurnsExceededError`` whose details are the agent id, ``max_turns`` and the checkpoint's
JSON (its view left out when it would pass half the payload limit; a recorded run's then
follows by reference); any other failure of the loop is an ``AgentRunError`` with the
checkpoint likewise.
:class:`~bloge.temporal.runner.TemporalRunner` turns both back into bloge's errors.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    TimeoutType,
)
from temporalio.exceptions import CancelledError as ActivityCancelledError
from temporalio.exceptions import TimeoutError as ActivityTimeoutError

from bloge.agent import (
    AgentCheckpoint,
    AgentInput,
    AgentOutput,
    AgentRunError,
    AgentUsage,
    BudgetExceededError,
    HandoffPayload,
    LlmSummarizer,
    MaxTurnsExceededError,
    RunPaused,
)
from bloge.agent.runtime import (
    AgentEngine,
    CallerAllowance,
    ModelCall,
    RecordedResult,
    RunStart,
    ToolOutcome,
    ToolRound,
    caller_ledger,
    check_priced,
    child_run_id,
    opening_of,
    spending_under,
)
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import BlogeUsageError
from bloge.core.masking import mask_credentials
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.types import LlmRequest, LlmResponse, ToolDefinition
from bloge.temporal import catalogue, wire
from bloge.temporal.catalogue import ServedAgent
from bloge.temporal.histories import (
    APPEND_ACTIVITY,
    LOG_END_ACTIVITY,
    PAYLOAD_TOO_LARGE,
    ContinueAsNewDue,
    GuestLog,
    ThreadLog,
    Turns,
    continue_as_new,
    numbered_pairs,
    read_view,
)
from bloge.temporal.limits import thread_budget_refusal
from bloge.temporal.options import MAX_PAYLOAD_BYTES, ToolPlan
from bloge.temporal.patches import (
    CHILD_SHARES,
    CHILD_WORKFLOWS,
    LONG_RUNS,
    POLICY_BUDGETS,
    QUIET_ENDS,
    REPORT_FAILED_TOOLS,
    RESUME_LIMITS,
    ROUND_CHECKPOINTS,
    SUMMARY_CALLS,
    THREAD_BUDGETS_REFUSED,
    UNPRICED_LIMITS,
    current_memo,
    patched,
)
from bloge.temporal.relay import watched_by_child
from bloge.temporal.shares import Shares
from bloge.temporal.waiting import (
    ANSWER_SIGNAL,
    LIMITS_SIGNAL,
    Answers,
    Limits,
    recorded_outcome,
    unknown_outcome,
    waits_here,
)
from bloge.temporal.wire import Json

WORKFLOW = "bloge.agent"
MODEL_ACTIVITY = "bloge.model"
TOOL_ACTIVITY = "bloge.tool"
FINISH_ACTIVITY = "bloge.finish"
BEGIN_ACTIVITY = "bloge.begin"
TOOL_FAILED_ACTIVITY = "bloge.tool_failed"
HANDOFF_ACTIVITY = "bloge.handoff"
#: The error type of a tool activity that stopped its call at its deadline.
TOOL_TIMED_OUT = "ToolTimedOut"
#: The error type Temporal gives an activity its worker's shutdown cut short.
WORKER_SHUTDOWN = "WorkerShutdown"
MAX_TURNS_ERROR = "MaxTurnsExceededError"
RUN_ERROR = "AgentRunError"


@workflow.defn(name=WORKFLOW)
class AgentWorkflow:
    """Runs ``start["agent"]`` from ``start`` (see :func:`start_payload`); returns the
    output's JSON (:meth:`AgentOutput.to_dict`)."""

    def __init__(self) -> None:
        self._answers = Answers()
        # New limits sent with the answers, and those the run goes on with since (its start's
        # keys: they are carried when it continues as new).
        self._limits = Limits()
        self._applied: Json = {}
        # Whether the run is budgeted with its worker's policy (see POLICY_BUDGETS).
        self._policy = False

    @workflow.signal(name=ANSWER_SIGNAL)
    def answer(self, decisions: Json) -> None:
        """Decisions on the calls the run waits on, by call id (see
        :mod:`bloge.temporal.waiting`)."""
        self._answers.take(decisions)

    @workflow.signal(name=LIMITS_SIGNAL)
    def limit(self, limits: Json) -> None:
        """New limits for the round that goes on once the run's waiting calls are answered:
        ``max_turns``, and ``budget``'s run limits, for the round of ``turn`` (see
        :mod:`bloge.temporal.waiting`)."""
        self._limits.take(limits)

    @workflow.run
    async def run(self, start: Json) -> RawValue:
        info = workflow.info()
        agent_id = str(start["agent"])
        agent = _served(info.task_queue, agent_id)
        # Workflows begun before runs continued as new replay without it.
        may_continue = patched(LONG_RUNS)
        run_id = info.workflow_id
        values = dict(start.get("context") or {})
        carried: Json | None = start.get("carried")
        messages = start.get("input")
        self._policy = agent.budgets is not None and workflow.patched(POLICY_BUDGETS)
        # Linked before the run begins: a handoff that cannot be taken fails it there, as
        # does a budget the run cannot keep.
        engine = _startable(agent, start, info.task_queue, policy=self._policy)
        begun = await _begin(agent, start, run_id, info.task_queue)
        thread_id, started, checkpoint, log = (begun.thread_id, begun.started,
                                               begun.checkpoint, begun.log)
        current = _current(agent, checkpoint, info.task_queue)
        turns_done = checkpoint.turn_count if checkpoint is not None else 0
        turns = Turns(run_id, thread_id, turns_done + 1,
                       agent.plan.limits if may_continue else None, log, carried)
        opening = wire.messages_from_json(messages) if messages else ()
        guest = _guest(agent, start, opening)
        turns.guest = guest is not None
        # A checkpoint given by value: the messages of it the thread's log holds are found
        # by equality.
        turns.by_value = carried is None and start.get("checkpoint") is not None
        own_tools = list(start.get("tools") or ())
        # A child workflow's callers, nearest first: its pause pauses them too.
        callers: list[Json] = list(start.get("callers") or ())
        effects = ActivityEffects(current, run_id, values, thread_id, log,
                                  local_model_calls=bool(start.get("local_model_calls")),
                                  turns=turns, principal=start.get("principal"),
                                  tools=own_tools, task_queue=info.task_queue,
                                  callers=callers, shares=Shares(start),
                                  watched_by=int(start.get("watched_by") or 0), guest=guest)
        ctx = OperatorContext.root(values, execution_id=run_id)
        # A checkpoint carries its conversation: a history given beside it is not used.
        run_start = RunStart(
            AgentInput(opening) if messages else None,
            history=(begun.history or ()) if checkpoint is None else (),
            checkpoint=checkpoint, tools=[wire.tool_from_json(tool) for tool in own_tools],
        )
        try:
            output = await self._ran(agent, engine, run_start, ctx, effects, turns, start,
                                     callers=callers, allowance=effects.shares.allowance)
        except MaxTurnsExceededError as error:
            await effects.finish(error.checkpoint, "max_turns", started, error)
            raise ApplicationError(str(error), error.agent_id, error.max_turns,
                                   *turns.checkpoint_details(error.checkpoint),
                                   *effects.shares.details(),
                                   type=MAX_TURNS_ERROR, non_retryable=True) from None
        except AgentRunError as error:
            if isinstance(error.__cause__, ContinueAsNewDue):
                await continue_as_new({**start, **self._applied, **effects.shares.carried()},
                                      turns,
                                      error.checkpoint, effects.keep, started,
                                      error.__cause__.turn - 1)
            await effects.finish(error.checkpoint, error.exit_reason, started,
                                 error.__cause__ or error)
            # The budget stop's own detail before the caller's report (which comes last).
            stopped = ((wire.budget_stop_to_json(error),)
                       if isinstance(error, BudgetExceededError) else ())
            raise ApplicationError(mask_credentials(str(error)), error.agent_id,
                                   error.exit_reason,
                                   *turns.checkpoint_details(error.checkpoint), *stopped,
                                   *effects.shares.details(),
                                   type=RUN_ERROR, non_retryable=True) from None
        except RunPaused as paused:
            # A run without a store to pause in (or a workflow begun before runs paused):
            # the run fails, plainly, with the checkpoint before the round (a resume asks
            # the model again).
            before = replace(paused.checkpoint,
                             conversation=paused.checkpoint.conversation[:-1])
            message = (f"run {run_id!r} reached tool calls that wait ({paused.status}: "
                       f"{', '.join(call.tool for call in paused.pending)}); a run waits on "
                       "Temporal only when it is recorded: give the workers a run store "
                       "(bloge.store)")
            await effects.finish(before, "error", started, paused)
            raise ApplicationError(message, agent_id, "error",
                                   *turns.checkpoint_details(before),
                                   *effects.shares.details(), type=RUN_ERROR,
                                   non_retryable=True) from None
        except asyncio.CancelledError as cancelled:
            cause = cancelled.__cause__
            if isinstance(cause, AgentRunError):
                await effects.finish(cause.checkpoint, "cancelled", started, cause)
            raise
        named = _named(output, run_id, thread_id)
        await effects.finish(output.checkpoint, output.exit_reason, started, None, named)
        return turns.result(named, effects.shares.report())

    async def _ran(self, agent: ServedAgent, engine: AgentEngine, run_start: RunStart,
                   ctx: OperatorContext, effects: ActivityEffects, turns: Turns, start: Json, *,
                   callers: Sequence[Json], allowance: CallerAllowance | None) -> AgentOutput:
        """The engine's run to its end: a recorded run waits where its calls wait (paused
        in the store, see :mod:`bloge.temporal.waiting`), and goes on with the limits sent
        with the answers, if any; a child workflow's spends what its callers left it
        (``allowance``)."""
        run_id = workflow.info().workflow_id
        while True:
            try:
                with (contextlib.nullcontext() if allowance is None
                      else spending_under(allowance)):
                    return await engine.run(run_start, ctx, effects=effects, observer=turns)
            except RunPaused as paused:
                if not waits_here(agent, paused):
                    raise
                # Paused in the store; the round goes on once its calls are decided.
                pending = await self._answers.wait(agent, run_id, paused, callers=callers)
                engine = self._limited(agent, engine, start, paused)
                run_start = RunStart(checkpoint=paused.checkpoint, pending=pending,
                                     tools=run_start.tools)

    def _limited(self, agent: ServedAgent, engine: AgentEngine, start: Json,
                 paused: RunPaused) -> AgentEngine:
        """``engine``, or, when new limits came with the answers, the engine of the run's
        agent with them (its ``max_turns``, its run budget raised), for the rest of the run
        and its later histories: as a local run resumed with them goes on. Limits it cannot
        keep (``usd`` on a model its worker has no price for) fail the run with the
        checkpoint before ``paused``'s round, as a local resume's ledger refuses them: a
        resume with other limits takes it up (a client that knows its worker's prices
        refuses them before it sends them, see ``TemporalRunStore``)."""
        limits = self._limits.taken(workflow.info().workflow_id, paused.tool_round.turn)
        if not limits or not workflow.patched(RESUME_LIMITS):
            return engine
        applied = dict(self._applied)
        if limits.get("max_turns") is not None:
            applied["max_turns"] = int(limits["max_turns"])
        if limits.get("budget"):
            budget = applied.get("budget", start.get("budget")) or {}
            applied["budget"] = {**budget, **limits["budget"]}
        going = {**start, **applied}
        limited = _linked(agent.engine(going.get("max_turns"), going.get("budget"),
                                       policy=self._policy),
                          workflow.info().task_queue, policy=self._policy)
        refused = _unpriced(limited)
        # Asked only by such a run: before it, its workflow task failed in the engine, again
        # and again (a history made so has no later events to replay).
        if refused is not None and workflow.patched(UNPRICED_LIMITS):
            before = replace(paused.checkpoint,
                             conversation=paused.checkpoint.conversation[:-1])
            raise AgentRunError(refused, agent_id=agent.definition.id, checkpoint=before,
                                exit_reason="error")
        self._applied = applied
        return limited


@dataclass(frozen=True, slots=True)
class _Begun:
    """Where a history of a run starts: its thread, when the run began, and the checkpoint
    or history its engine starts from; a recorded run's knowledge of its thread's log."""

    thread_id: str | None
    started: float
    checkpoint: AgentCheckpoint | None
    history: Sequence[LlmMessage] | None
    log: ThreadLog | None


async def _begin(agent: ServedAgent, start: Json, run_id: str, task_queue: str) -> _Begun:
    """A run's first history starts it (in the store too, for a recorded run: the thread's
    view is read by reference); a later one goes on from what the last one carried."""
    agent_id = agent.definition.id
    carried: Json | None = start.get("carried")
    if carried is not None:  # a later history of a run that continued as new
        thread_id = carried.get("thread_id")
        log = None
        if agent.recorded:
            log = ThreadLog(int(carried["next_seq"]),
                       await read_view(agent, run_id, thread_id, carried["view"]),
                       transcript=carried["transcript"])
            conversation = log.messages
        else:
            conversation = wire.messages_from_json(carried["view"])
        return _Begun(thread_id, float(carried["started"]), AgentCheckpoint(
            conversation, int(carried["turn_count"]), dict(carried.get("tool_results") or {}),
            carried.get("agent_id") or agent_id,  # the agent it handed over to, if it did
            AgentUsage.from_dict(carried["usage"])), None, log)
    thread_id = start.get("thread_id")
    checkpoint = (None if start.get("checkpoint") is None
                  else AgentCheckpoint.from_json(DEFAULT_CODEC.encode(start["checkpoint"])))
    history = wire.messages_from_json(start["history"]) if start.get("history") else None
    if not agent.recorded:
        if start.get("resume"):
            raise ApplicationError(
                f"run {run_id!r} goes on from its checkpoint in the run store, and the workers "
                f"of task queue {task_queue!r} keep none: give them the run store "
                "(bloge.store)", type="BlogeUsageError", non_retryable=True)
        return _Begun(thread_id, workflow.time(), checkpoint, history, None)
    if start.get("holder") is not None:
        # A guest on its caller's thread: it joins the thread under its caller's hold, from
        # its input alone (see GuestLog).
        await workflow.execute_activity(BEGIN_ACTIVITY, {
            "agent": agent_id, "run_id": run_id, "thread_id": thread_id,
            "holder": start["holder"], "parent_run_id": start["parent_run_id"],
            "input": start.get("input") or [], "principal": start.get("principal"),
            "trace_parent": start.get("trace_parent")}, **agent.plan.finish)
        return _Begun(thread_id, workflow.time(), checkpoint, history, None)
    # The run store keeps the run, on its thread.
    thread_id = thread_id or workflow.uuid4().hex
    begun = await workflow.execute_activity(BEGIN_ACTIVITY, {
        "agent": agent_id, "run_id": run_id, "thread_id": thread_id,
        "input": start.get("input") or [],
        "metadata": {"workflow_id": run_id, "task_queue": task_queue},
        "principal": start.get("principal"), "trace_parent": start.get("trace_parent"),
        **({"tools": start["tools"]} if start.get("tools") else {}),
        **({"parent_run_id": start["parent_run_id"]} if start.get("parent_run_id") else {}),
        **({"resume": True} if start.get("resume") else {}),
    }, **agent.plan.finish)
    pairs = (begun["history"] if "history" in begun  # begun by an earlier worker
             else await read_view(agent, run_id, thread_id, begun["view"]))
    log = ThreadLog(int(begun["next_seq"]), pairs)
    resumed: Json | None = begun.get("resumed")
    if resumed is not None:  # a run that ended, taken back: it goes on from its checkpoint
        checkpoint = AgentCheckpoint(log.messages, int(resumed["turns"]), {},
                                     str(resumed["agent"]),
                                     AgentUsage.from_dict(resumed["usage"]))
    return _Begun(thread_id, workflow.time(), checkpoint,
                  log.messages if checkpoint is None else history, log)


def _guest(agent: ServedAgent, start: Json,
           opening: Sequence[LlmMessage]) -> GuestLog | None:
    """A recorded child workflow's part of its caller's thread, when it runs there (its
    start names the run that ``holder``s the thread): of its ``opening`` messages, those at
    ``logged`` are its caller's in the log already (``context = "parent"``)."""
    holder = start.get("holder")
    if holder is None or not agent.recorded:
        return None
    logged = set(start.get("logged") or ())
    return GuestLog(str(holder), [message for index, message in enumerate(opening)
                                  if index in logged])


def start_payload(agent_id: str, *, input: AgentInput | None = None,
                  history: Sequence[Any] | None = None,
                  checkpoint: AgentCheckpoint | None = None, max_turns: int | None = None,
                  context: Mapping[str, Any] | None = None,
                  thread_id: str | None = None, local_model_calls: bool = False,
                  principal: Principal | None = None, trace_parent: str | None = None,
                  tools: Sequence[ToolDefinition] = (),
                  budget: Mapping[str, Any] | None = None, resume: bool = False) -> Json:
    """What :class:`AgentWorkflow` starts from: JSON data only (``context`` too);
    ``trace_parent``: the trace context of its caller, kept with the run (see
    :class:`~bloge.core.tracecontext.TraceParent`); ``tools``: the run's own external tools
    (a ``/v1`` client's); ``budget``: run budget limits raised or set over the agent's
    (``{"tokens": 80000}``, what ``bloge run --budget`` gives); ``resume``: the recorded
    run that ended (its workflow's id) is taken back and goes on from its checkpoint in the
    run store, on its thread."""
    return {
        **({"resume": True} if resume else {}),
        **({"tools": [wire.tool_to_json(tool) for tool in tools]} if tools else {}),
        **({"budget": dict(budget)} if budget else {}),
        "trace_parent": trace_parent,
        "principal": None if principal is None else {"name": principal.name,
                                                      "admin": principal.admin},
        "agent": agent_id,
        "input": None if input is None else wire.messages_to_json(input.messages),
        "history": None if history is None else wire.messages_to_json(history),
        "checkpoint": None if checkpoint is None else DEFAULT_CODEC.decode(checkpoint.to_json()),
        "max_turns": max_turns,
        "context": dict(context or {}),
        "thread_id": thread_id,
        "local_model_calls": local_model_calls,
    }


def _current(agent: ServedAgent, checkpoint: AgentCheckpoint | None,
             task_queue: str) -> ServedAgent:
    """The agent the run goes on with: the one it handed over to, when its checkpoint is that
    agent's (the engine finds it among those its handoffs reach)."""
    if checkpoint is None or checkpoint.agent_id in (None, agent.definition.id):
        return agent
    return catalogue.find(task_queue, str(checkpoint.agent_id)) or agent


def _served(task_queue: str, agent_id: str) -> ServedAgent:
    """The agent ``task_queue`` serves as ``agent_id``; the run fails when it serves none."""
    agent = catalogue.find(task_queue, agent_id)
    if agent is None:
        raise ApplicationError(
            f"no agent {agent_id!r} on task queue {task_queue!r} (it serves: "
            f"{', '.join(catalogue.known(task_queue)) or 'none'})",
            type="UnknownAgent", non_retryable=True)
    return agent


def _startable(agent: ServedAgent, start: Json, task_queue: str, *,
               policy: bool) -> AgentEngine:
    """The engine the run starts with, its handoffs linked (see :func:`_linked`); a run the
    workers cannot keep within its budgets fails here, before it begins: a ``usd`` limit on
    a model without a price, or a thread budget of an agent it may run (a workflow keeps
    none: see :mod:`bloge.temporal.limits`)."""
    engine = _linked(agent.engine(start.get("max_turns"), start.get("budget"), policy=policy),
                     task_queue, policy=policy)
    refused = _unpriced(engine)
    if refused is not None:
        raise ApplicationError(refused, type="BlogeUsageError", non_retryable=True)
    reached = engine.reached()
    held = sorted(each.definition.id for each in reached
                  if each.definition.thread_budget is not None
                  and each.definition.thread_budget.limited)
    if held and workflow.patched(THREAD_BUDGETS_REFUSED):
        raise ApplicationError(thread_budget_refusal(held[0]), type="BlogeUsageError",
                               non_retryable=True)
    return engine


def _unpriced(engine: AgentEngine) -> str | None:
    """Why ``engine`` cannot keep its budget, or one its handoffs reach cannot: a ``usd``
    limit on a model without a price (:func:`~bloge.agent.runtime.check_priced`, on the run's
    limits: a workflow keeps no others), asked before the run begins rather than failing its
    task again and again in the loop."""
    try:
        for each in engine.reached():
            check_priced(each.definition, each.budgets)
    except BlogeUsageError as error:
        return str(error)
    return None


def _linked(engine: AgentEngine, task_queue: str, *, policy: bool = False) -> AgentEngine:
    """``engine``, its handoffs (and theirs, at any distance) linked to the engines of the
    agents ``task_queue`` serves (budgeted with their worker's policy if ``policy``): the same
    ones on every replay, since a worker's agents do not change while it runs. A handoff to
    an agent the queue does not serve fails the run, naming it."""
    if not engine.definition.handoffs:
        return engine
    agents = {agent_id: found for agent_id in catalogue.known(task_queue)
              if (found := catalogue.find(task_queue, agent_id)) is not None}
    engine.link_all({agent_id: agent.definition for agent_id, agent in agents.items()},
                    lambda definition: agents[definition.id].engine(policy=policy))
    for linked in engine.reached():
        for handoff in linked.definition.handoffs:
            if handoff.agent_id not in linked.linked:
                raise ApplicationError(
                    f"agent {linked.definition.id!r} hands over to agent {handoff.agent_id!r}, "
                    f"which task queue {task_queue!r} does not serve (it serves: "
                    f"{', '.join(sorted(agents)) or 'none'})",
                    type="UnknownAgent", non_retryable=True)
    return engine


def _named(output: AgentOutput, run_id: str, thread_id: str | None) -> AgentOutput:
    return replace(output, run_id=run_id, thread_id=thread_id)


class ActivityEffects:
    """The engine's I/O as activities: a model call per turn, a tool call per activity (at
    most ``max_tool_concurrency`` of a round at once), in the order the model asked; with
    ``local_model_calls``, a model call is a local activity. A recorded run's model call
    carries the view by reference to the thread's log (and the turn's new messages, which
    the activity writes there first); another run's carries the view itself."""

    __slots__ = ("_agent", "_asked", "_asking", "_callers", "_guest", "_guests_wrote", "_local",
                 "_log", "_principal", "_queue", "_run_id", "_thread_id", "_tools", "_turns",
                 "_values", "_watched_by", "shares")

    def __init__(self, agent: ServedAgent, run_id: str, values: Mapping[str, Any],
                 thread_id: str | None = None, log: ThreadLog | None = None, *,
                 local_model_calls: bool = False, turns: Turns,
                 principal: Json | None = None, tools: Sequence[Json] = (),
                 task_queue: str = "", callers: Sequence[Json] = (),
                 shares: Shares | None = None, watched_by: int = 0,
                 guest: GuestLog | None = None) -> None:
        self._agent = agent  # the agent the run goes on with (another, once it handed over)
        self._queue = task_queue
        self._callers = list(callers)  # a child workflow's: the runs waiting on it
        # How many of them (nearest first) watch its chunks (see bloge.temporal.relay).
        self._watched_by = watched_by
        self.shares = shares or Shares({})  # what it shares with its callers and children
        self._tools = list(tools)  # the run's own, which its model calls offer too
        self._principal = principal  # whom the run is for: its tools act on their behalf
        self._run_id = run_id
        self._values = values
        self._thread_id = thread_id
        self._log = log
        self._local = local_model_calls
        self._turns = turns
        # A guest on its caller's thread: its messages are numbered by the store.
        self._guest = guest
        # Children on this run's thread (see _on_this_thread): the turn whose asking message
        # was written for them, and whether they may have written since this run last
        # learnt where the thread's log goes on.
        self._asking = asyncio.Lock()
        self._asked = 0
        self._guests_wrote = False

    @property
    def call_model(self) -> ModelCall:
        return self._call_model

    @property
    def tools(self) -> ToolRound:
        return self

    async def handed_to(self, handoff: HandoffPayload) -> ActivityEffects:
        """Tell the handoff from an activity (when anyone is told: a store, listeners), then
        make the other agent's calls: it is served here (see :func:`_link`)."""
        agent = self._agent
        if agent.recorded or agent.listeners:
            await workflow.execute_activity(HANDOFF_ACTIVITY, {
                "agent": agent.definition.id, "run_id": self._run_id,
                "thread_id": self._thread_id, **self._watchers(),
                "handoff": {"turn_number": handoff.turn_number, "handoff": handoff.handoff,
                            "from_agent": handoff.from_agent, "to_agent": handoff.to_agent,
                            "tool_call_id": handoff.tool_call_id, "reason": handoff.reason},
            }, **agent.plan.finish)
        self._agent = _served(self._queue, handoff.to_agent)  # linked before the run began
        return self

    def _watchers(self) -> Json:
        """An activity's payload's ``watchers``: the callers that watch the run's chunks
        (none given when none does)."""
        if not self._watched_by:
            return {}
        return {"watchers": self._callers[:self._watched_by]}

    def _waiting(self) -> Json:
        """An activity's payload's ``waiting``: the callers that wait on the run (a child
        workflow's, nearest first), whose leases its activities renew with its own, for
        they run none while they wait (none given for a run no one waits on)."""
        if not self._callers:
            return {}
        return {"waiting": [caller["run_id"] for caller in self._callers]}

    async def _call_model(self, request: LlmRequest, turn: int) -> LlmResponse:
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id, "turn": turn,
                   "thread_id": self._thread_id, "model": request.model,
                   "temperature": request.temperature, "max_tokens": request.max_tokens,
                   "context": self._values, **self._watchers(), **self._waiting()}
        if self._tools:
            payload["tools"] = self._tools
        if request.fallback != self._agent.definition.fallback:  # a budget left some out
            payload["fallback"] = list(request.fallback)
        log, view = self._log, self._turns.view
        written = 0
        if log is not None and view is not None:
            written = len(log.unwritten)
            payload["append"] = numbered_pairs(log.unwritten)
            payload["view"] = view
        else:
            payload["messages"] = wire.messages_to_json(request.messages)
        guest, transcript = self._guest, self._turns.transcript
        if guest is not None:  # its new messages go to the log first, numbered there
            payload["guest"] = guest.append(transcript)
        encoded = self._turns.bound(payload, f"the model call of turn {turn}")
        try:
            if self._local:
                result = await workflow.execute_local_activity(MODEL_ACTIVITY, encoded,
                                                               **self._agent.plan.local_model)
            else:
                result = await workflow.execute_activity(MODEL_ACTIVITY, encoded,
                                                         **self._agent.plan.model)
        except ActivityError as error:
            _raise_if_cancelled(error)
            raise
        if log is not None:
            log.written(written)
        if guest is not None:
            guest.wrote(transcript)
        return wire.response_from_json(result)

    async def call_summary(self, request: LlmRequest, turn: int,
                           summarized: int) -> LlmResponse:
        """A memory's summary before turn ``turn`` as a model activity (never a local one),
        which tells the run's listeners of it (``on_agent_memory_summarized``): these
        effects are :class:`~bloge.agent.runtime.SummaryEffects`."""
        payload = summary_payload(
            self._agent.definition.id, request, self._turns.max_bytes, run_id=self._run_id,
            thread_id=self._thread_id, turn=turn, summarized=summarized,
            **self._watchers(), **self._waiting())
        try:
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
            if recorded is not None:  # a round continued after its run paused
                found = recorded.get(call.id)
                plan = self._agent.plan.tools.get(call.name)
                if found is not None:
                    return recorded_outcome(call, found)
                if plan is None or not plan.idempotent:
                    return unknown_outcome(call)
            if limit is None:
                return await self._call_tool(turn, call)
            async with limit:
                return await self._call_tool(turn, call)

        # Every call in a task of its own under gather, also a round of one: awaited in the
        # run's own task instead, a child workflow's call (a sub-agent waiting for an
        # approval) does not end cancelled when the caller's workflow is cancelled, and the
        # caller ends completed (tests/temporal/test_subagent_pauses.py, test_cli.py's
        # cancel of a waiting caller). Tried twice for a few instructions a round; keep it.
        outcomes = list(await asyncio.gather(*(one(call) for call in calls)))
        await self._caught_up()
        return outcomes

    async def _caught_up(self) -> None:
        """Number on from where the thread's log ends, once this run's children on its
        thread (and theirs) wrote there: the store numbered their messages, and tells the
        number from an activity (the same on every replay)."""
        log = self._log
        if not self._guests_wrote or log is None:
            return
        found = await workflow.execute_activity(LOG_END_ACTIVITY, {
            "agent": self._agent.definition.id, "run_id": self._run_id,
            "thread_id": self._thread_id}, **self._agent.plan.finish)
        log.next_seq = max(log.next_seq, int(found["next_seq"]))
        self._guests_wrote = False

    async def _on_this_thread(self, turn: int) -> str | None:
        """Ready this run's thread for a child of turn ``turn`` that runs on it (``thread =
        "parent"``): the run that holds the thread, whose hold it runs under; ``None`` for a
        run with no thread in the store (its child runs on a thread of its own, as a local
        unrecorded caller's does).

        The messages of this run's transcript so far — the one that asks the child among
        them — are written first (once a turn, however many children it asks), so that the
        log reads in order, and so that a run that numbers its own messages (the holder)
        has none unwritten while its children's are numbered by the store after the log's
        end; it numbers on from the new end once its round is done (:meth:`_caught_up`)."""
        log, guest, transcript = self._log, self._guest, self._turns.answered
        if guest is None and log is None:
            return None
        async with self._asking:
            if self._asked != turn:
                payload: Json = {"agent": self._agent.definition.id, "run_id": self._run_id,
                                 "thread_id": self._thread_id}
                if guest is not None:
                    payload["guest"] = guest.append(transcript)
                else:
                    assert log is not None
                    log.number(transcript, by_value=self._turns.by_value)
                    written = len(log.unwritten)
                    payload["messages"] = numbered_pairs(log.unwritten)
                encoded = self._turns.bound(
                    payload, f"the messages of turn {turn} before its sub-agents")
                await workflow.execute_activity(APPEND_ACTIVITY, encoded,
                                                **self._agent.plan.finish)
                if guest is not None:
                    guest.wrote(transcript)
                else:
                    assert log is not None
                    log.written(written)
                self._asked = turn
        self._guests_wrote = log is not None
        return self._run_id if guest is None else guest.holder

    async def _call_tool(self, turn: int, call: ToolCall) -> ToolOutcome:
        plan = self._agent.plan.tools.get(call.name)
        # An unknown tool: the worker's dispatcher words the error, as a local run does.
        options = self._agent.plan.finish if plan is None else plan.activity
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id, "turn": turn,
                   "thread_id": self._thread_id, "call": wire.call_to_json(call),
                   "context": self._values, "principal": self._principal, **self._watchers(),
                   **self._waiting()}
        if plan is not None and plan.child is not None and catalogue.find(
                self._queue, plan.child) is not None and patched(CHILD_WORKFLOWS):
            payload["child"] = True  # the activity stops at the question
        started = workflow.time()
        if plan is not None and self.shares.nested and not self.shares.below.take():
            # A sub-agent's run past the run tree's ceiling: the call does not run.
            outcome = ToolOutcome(call, success=False, arguments=_arguments(call), content=(
                f"Error: tool {call.name!r} was not run: the sub-agents of this run made "
                f"{self.shares.below.made} tool calls, their ceiling "
                "(max_descendant_tool_calls); answer with what you have"))
            if self._agent.recorded or self._agent.listeners:
                await self._report_failed(payload, outcome, started)
            return outcome
        try:
            result = await workflow.execute_activity(TOOL_ACTIVITY, wire.encoded(payload),
                                                     **options)
        except ActivityError as error:
            _raise_if_cancelled(error)
            outcome = _failed(call, error, plan.timeout if plan else None,
                              idempotent=plan.idempotent if plan else False)
            if patched(REPORT_FAILED_TOOLS):
                await self._report_failed(payload, outcome, started)
            return outcome
        if "child" in result:
            assert plan is not None
            return await self._run_child(turn, call, plan, payload, result["child"], started)
        return wire.outcome_from_json(call, result)

    async def _run_child(self, turn: int, call: ToolCall, plan: ToolPlan, payload: Json,
                         asked: Json, started: float) -> ToolOutcome:
        """A sub-agent call's child run, as a child workflow of this one (bounded by the
        tool's timeout); the call's end told as the tool activity would have."""
        agent_id = str(asked["agent"])
        child_id = child_run_id(f"{self._run_id}:{turn}:{call.id}")
        assert child_id is not None
        opening = self._child_input(turn, asked)
        if opening is None:
            return await self._not_started(call, payload, started, (
                f"sub-agent {agent_id!r} starts from this run's conversation (context = "
                f"\"parent\"), which is not known in its workflow's history for turn {turn}"))
        holder = (await self._on_this_thread(turn) if asked.get("thread") == "parent"
                  else None)
        start = {**start_payload(agent_id, input=opening, context=self._values,
                                 local_model_calls=self._local,
                                 thread_id=None if holder is None else self._thread_id),
                 **({} if holder is None else {"holder": holder,
                                               "logged": self._logged(opening)}),
                 "principal": self._principal, "parent_run_id": self._run_id,
                 # Who waits on the child, nearest first: its pause pauses them too.
                 "callers": [{"run_id": self._run_id, "call_id": call.id, "tool": call.name},
                             *self._callers]}
        size = wire.size(start)
        if size > self._turns.max_bytes:
            return await self._not_started(call, payload, started, (
                f"sub-agent {agent_id!r} was not started: its start, which carries this "
                f"run's conversation (context = \"parent\"), would be {size:,} bytes, over the "
                f"{self._turns.max_bytes:,} of bloge.temporal.max-payload-bytes (Temporal "
                "refuses a payload over 2 MiB); use the fresh context for it"))
        # What the caller's budgets (and its callers') allow the child, and the tree's
        # tool-call ceiling.
        shared = patched(CHILD_SHARES)
        ledger = caller_ledger()
        if shared:
            start.update(self.shares.for_child(ledger, asked.get("ceiling")))
        watched_by = watched_by_child(self._watched_by, streams=self._agent.definition.streaming)
        if watched_by:
            start["watched_by"] = watched_by
        options: dict[str, Any] = {"id": child_id, "task_queue": self._queue,
                                   "memo": current_memo()}
        if plan.timeout is not None:
            options["execution_timeout"] = timedelta(seconds=plan.timeout)
        try:
            data = await workflow.execute_child_workflow(WORKFLOW, start, **options)
        except ChildWorkflowError as error:
            if shared:
                self.shares.settle(ledger, getattr(error.cause, "details", None))
            outcome = _child_failed(call, agent_id, child_id, error, plan.timeout)
        else:
            if shared:
                self.shares.settle(ledger, data)
            output = wire.output_from_json(data)
            answer = data.get("output")
            result = output.content if answer is None else answer
            content = result if isinstance(result, str) else DEFAULT_CODEC.encode_lenient(result)
            outcome = ToolOutcome(call, success=True, content=content, result=result,
                                  arguments=_arguments(call),
                                  latency_ms=(workflow.time() - started) * 1000.0)
        if self._agent.recorded or self._agent.listeners:
            await self._report_failed(payload, outcome, started)
        return outcome

    def _logged(self, opening: AgentInput) -> list[int]:
        """Which messages of a child's ``opening`` the thread's log holds: this run's, that
        a ``context = "parent"`` child on its thread refers to instead of writing them
        again (all but the asking message, written again without its unanswered calls, and
        the question)."""
        known = self._guest if self._guest is not None else self._log
        if known is None:
            return []
        return [index for index, message in enumerate(opening.messages) if known.holds(message)]

    def _child_input(self, turn: int, asked: Json) -> AgentInput | None:
        """What a sub-agent call's child starts from: the question, or (``context =
        "parent"``) this run's conversation as its model saw it when it asked for the call,
        then the question (see :func:`~bloge.agent.runtime.opening_of`); ``None`` when that
        conversation is not known. Workflow state, not I/O: the same on every replay, and
        given once, as the child's start (a child taken up again is not given it again)."""
        question = str(asked["question"])
        if asked.get("context") != "parent":
            return AgentInput.of(question)
        conversation = self._turns.conversation(turn)
        return None if conversation is None else AgentInput(opening_of(conversation, question))

    async def _not_started(self, call: ToolCall, payload: Json, started: float,
                           problem: str) -> ToolOutcome:
        """A sub-agent call whose child could not start: the call's error, told as a failed
        tool activity's."""
        outcome = ToolOutcome(call, success=False, content=f"Error: tool {call.name!r} failed: "
                              f"{problem}", arguments=_arguments(call))
        if self._agent.recorded or self._agent.listeners:
            await self._report_failed(payload, outcome, started)
        return outcome

    async def _report_failed(self, payload: Json, outcome: ToolOutcome, started: float) -> None:
        """Tell the end of a tool activity that could not (it timed out, its worker died), as
        a local run's dispatcher would: on_agent_tool_completed, the stream's tool_end, the
        run's events in the store. The run goes on if that fails: the model has its answer."""
        try:
            await workflow.execute_activity(TOOL_FAILED_ACTIVITY, {
                **payload, "content": outcome.content,
                **({"success": True} if outcome.success else {}),
                "latency_ms": (workflow.time() - started) * 1000.0,
            }, **self._agent.plan.finish)
        except ActivityError as error:
            _raise_if_cancelled(error)
            workflow.logger.warning("run %s: the end of tool call %s could not be told: %s",
                                    self._run_id, outcome.call.id, error.cause or error)

    async def keep(self, turns: int, view: list[Any], usage: AgentUsage) -> None:
        """Write a recorded run's new messages and its progress (``turns`` done, its ``view``
        by reference) to the store, before it continues as new."""
        log = self._log
        assert log is not None
        written = len(log.unwritten)
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id,
                   "thread_id": self._thread_id, "messages": numbered_pairs(log.unwritten),
                   "turns": turns, "view": view, "usage": usage.to_dict()}
        encoded = self._turns.bound(payload, "the messages it keeps before it continues as new")
        await workflow.execute_activity(APPEND_ACTIVITY, encoded, **self._agent.plan.finish)
        log.written(written)

    async def finish(self, checkpoint: AgentCheckpoint, exit_reason: str, started: float,
                     error: BaseException | None, output: AgentOutput | None = None) -> None:
        """The end of the run, reported from an activity (``on_agent_loop_exited``, and the
        run's end in the store); a run with no one to tell (no store, no listeners) needs
        no activity: its end is the workflow's."""
        agent = self._agent
        if not (agent.recorded or agent.listeners) and patched(QUIET_ENDS):
            return
        usage: AgentUsage = checkpoint.usage
        recorded = None
        log, guest = self._log, self._guest
        transcript = self._turns.transcript or (
            output.messages if output is not None else checkpoint.conversation)
        if guest is not None:  # the thread's view stays its holder's
            recorded = {"guest": guest.append(transcript), **self._end_of(usage, output, error)}
        if log is not None:
            await self._caught_up()  # a run cancelled while its children ran on its thread
            log.number(transcript)
            recorded = {
                "messages": numbered_pairs(log.unwritten),
                "view": log.refer(checkpoint.conversation),
                **self._end_of(usage, output, error),
                **self._cut_short(checkpoint, output),
            }
        payload = {"agent": self._agent.definition.id, "run_id": self._run_id,
                   "thread_id": self._thread_id, "recorded": recorded,
                   "turns": checkpoint.turn_count, "llm_calls": usage.llm_calls,
                   "total_tokens": usage.total_tokens,
                   "duration_ms": (workflow.time() - started) * 1000.0,
                   "exit_reason": exit_reason,
                   "error_type": None if error is None else type(error).__name__,
                   "error_message": None if error is None else mask_credentials(str(error))}
        encoded = self._turns.bound(payload, "its end")
        await workflow.execute_activity(FINISH_ACTIVITY, encoded, **self._agent.plan.finish)
        if log is not None:
            log.written(len(log.unwritten))
        if guest is not None:
            guest.wrote(transcript)

    def _cut_short(self, checkpoint: AgentCheckpoint, output: AgentOutput | None) -> Json:
        """For a recorded run that ended in the middle of a tool round, the turns its kept
        checkpoint goes on from (``checkpoint_turns``): the turn before the round's, whose
        view the checkpoint is, as a local run keeps its checkpoint from before the round
        (a resume asks the model that turn again; without a tool ledger it cannot continue
        the round as a local run does)."""
        if output is not None or not self._turns.cut_short(checkpoint):
            return {}
        if not workflow.patched(ROUND_CHECKPOINTS):  # a history made before: as it ended
            return {}
        return {"checkpoint_turns": checkpoint.turn_count - 1}

    @staticmethod
    def _end_of(usage: AgentUsage, output: AgentOutput | None,
                error: BaseException | None) -> Json:
        """How a recorded run ended, for its finish activity."""
        return {"usage": usage.to_dict(),
                "output": (None if output is None
                           else output.to_dict(messages=False, checkpoint=False)),
                "error": None if error is None else {
                    "type": type(error).__name__, "message": mask_credentials(str(error))}}


def _raise_if_cancelled(error: ActivityError) -> None:
    """A call cancelled with its workflow: the run is cancelled (as a local run's task is),
    not failed by that call."""
    if isinstance(error.cause, ActivityCancelledError):
        raise asyncio.CancelledError(str(error.cause)) from error


def _child_failed(call: ToolCall, agent_id: str, child_id: str, error: ChildWorkflowError,
                  timeout: float | None) -> ToolOutcome:
    """A child workflow that did not answer, as the tool message a local run would give."""
    cause = error.cause
    if isinstance(cause, ActivityCancelledError):
        problem = (f"tool {call.name!r} failed: sub-agent {agent_id!r} (run {child_id}) was "
                   "cancelled")
    elif isinstance(cause, ActivityTimeoutError):
        bound = "" if timeout is None else f" after {timeout:g} s"
        problem = f"tool {call.name!r} timed out{bound}"
    else:
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
        problem = (f"tool {call.name!r} failed: SubAgentError: sub-agent {agent_id!r} (run "
                   f"{child_id}) failed: {mask_credentials(message)}")
    return ToolOutcome(call, success=False, content=f"Error: {problem}",
                       arguments=_arguments(call))


def _arguments(call: ToolCall) -> Any:
    """A call's arguments, parsed (``None`` when they are no JSON)."""
    try:
        return DEFAULT_CODEC.decode(call.arguments)
    except Exception:  # noqa: BLE001 -- the model's text; its call ran nonetheless
        return None


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


class WorkflowSummarizer(LlmSummarizer):
    """A ``summary(n)`` memory's summarizer in a workflow. In a run begun after
    :data:`~bloge.temporal.patches.SUMMARY_CALLS` (asked as a run first summarizes), its
    summaries are model calls of the run, reserved, capped and priced, and made by the run's
    :meth:`ActivityEffects.call_summary`; in a run begun before, by its chat (a
    :func:`summary_chat`)."""

    __slots__ = ()

    def spends(self) -> bool:
        return workflow.patched(SUMMARY_CALLS)


def summary_chat(agent_id: str, options: Mapping[str, Any],
                 max_bytes: int = MAX_PAYLOAD_BYTES) -> Any:
    """The chat a ``summary(n)`` memory summarized with inside a workflow before its
    summaries were the run's model calls (:data:`~bloge.temporal.patches.SUMMARY_CALLS`;
    since, :meth:`ActivityEffects.call_summary` makes them): a model activity without tools,
    notifying no listener."""

    async def chat(request: LlmRequest) -> LlmResponse:
        payload = summary_payload(agent_id, request, max_bytes)
        result = await workflow.execute_activity(MODEL_ACTIVITY, payload, **options)
        return wire.response_from_json(result)

    return chat


def summary_payload(agent_id: str, request: LlmRequest, max_bytes: int,
                    **run: Any) -> Json:
    """The model activity's payload of a memory's summary: ``request``'s messages, within
    the payload limit; ``run``: the run's id, thread, turn… that the activity tells the
    run's listeners of it with (see :meth:`ActivityEffects.call_summary`)."""
    payload = {"agent": agent_id, "summary": True, "model": request.model,
               "temperature": request.temperature, "max_tokens": request.max_tokens,
               "messages": wire.messages_to_json(request.messages), "context": {}, **run}
    size = wire.size(payload)
    if size > max_bytes:
        raise ApplicationError(
            f"run {workflow.info().workflow_id!r}: the messages its memory summarizes "
            f"would be {size:,} bytes, over the {max_bytes:,} of "
            "bloge.temporal.max-payload-bytes; summarize more often (a smaller summary(n))",
            type=PAYLOAD_TOO_LARGE, non_retryable=True)
    return payload
