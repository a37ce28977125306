"""``Execution``: one run of the loop — its memory, transcript and counters — walking the
steps of :mod:`.steps`: a model turn (guards, budget, typed answers), a tool round (calls that
may wait pause the run), and the end, told to the listeners and the observer.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import (
    Mapping,
)
from typing import TYPE_CHECKING, Any, assert_never

from bloge.agent.handoffs import HandoffDef, reason_of
from bloge.agent.listeners import (
    AgentCallbackContext,
    HandoffPayload,
    LlmCalledPayload,
    LoopExitedPayload,
    MemorySummarizedPayload,
    TurnStartedPayload,
)
from bloge.agent.loop import steps
from bloge.agent.loop.answers import response_of
from bloge.agent.loop.budget import (
    BudgetCounters,
    BudgetedRound,
    RunLedger,
    RunSummaries,
    SummaryEffects,
)
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import Handoff
from bloge.agent.loop.errors import (
    AgentRunError,
    BudgetExceededError,
    GuardrailTrippedError,
    MaxTurnsExceededError,
)
from bloge.agent.loop.guarded_round import GuardedRound
from bloge.agent.loop.guards import WITHHELD, GuardTripped, RunGuards
from bloge.agent.loop.handoff_round import HandoffRound
from bloge.agent.loop.observer import PendingRound, RunObserver
from bloge.agent.loop.pause import RunPaused
from bloge.agent.loop.records import AgentOutput, AgentUsage
from bloge.agent.loop.start import Opening, handed_over
from bloge.agent.loop.tools import ChunkSink, ToolDispatcher, ToolOutcome
from bloge.agent.memory.conversation import ConversationMemory
from bloge.agent.memory.factory import create_memory
from bloge.agent.memory.summary import LlmSummarizer
from bloge.agent.output.answers import PartialSink, TypedAnswers
from bloge.agent.output.problems import OUTPUT_INVALID, OutputValidationError, repair_prompt
from bloge.core.context import OperatorContext
from bloge.core.masking import mask_credentials
from bloge.core.operator import BoundOperator
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.pool_wait import PoolWait
from bloge.llm.types import LlmRequest, LlmResponse, ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.loop.approval import RoundPlan
    from bloge.agent.loop.engine import AgentEngine, ModelCall, RunEffects, ToolRound

_log = logging.getLogger("bloge.agent")
#: The names of a run's external tools when it has none (most runs): one set for them all,
#: not an empty frozenset of 216 B that every open run keeps.
_NO_NAMES: frozenset[str] = frozenset()


class Execution:
    """One run of an :class:`~bloge.agent.loop.engine.AgentEngine`: the state machine and its
    bookkeeping."""

    __slots__ = ("_budget", "_cache_key", "_call_model", "_chat", "_context", "_counters",
                 "_ctx", "_dispatcher", "_effects", "_engine", "_external", "_external_tools",
                 "_guards",
                 "_listeners", "_may_wait", "_memory", "_new_input", "_observer", "_plan",
                 "_pool_wait", "_prepare", "_refused_input", "_sink", "_stream",
                 "_tool_definitions", "_typed", "_value",
                 "base_usage", "cache_read",
                 "cache_written", "calls", "completion_tokens",
                 "prompt_tokens", "tool_results", "transcript", "turn", "turns_done",
                 "unreported")

    def __init__(self, engine: AgentEngine, ctx: OperatorContext, start: Opening,
                 chat: BoundOperator, sink: ChunkSink | None,
                 observer: RunObserver | None = None,
                 effects: RunEffects | None = None,
                 external: tuple[ToolDefinition, ...] = (),
                 counters: BudgetCounters | None = None, *,
                 transcript: list[LlmMessage] | None = None) -> None:
        definition = engine.definition
        self._engine = engine
        self._ctx = ctx
        self._context = AgentCallbackContext(ctx.execution_id, ctx.graph_name, ctx.node_id,
                                             engine.ref)
        principal = ctx.principal
        self._budget = RunLedger(definition, engine.budgets, counters=counters,
                                 thread_id=None if observer is None else observer.thread_id,
                                 principal=None if principal is None else principal.name,
                                 base=start.base_usage, estimator=engine.token_estimator,
                                 checkpoint=self.checkpoint, usage=lambda: self.usage,
                                 run_id=None if observer is None else observer.run_id)
        self._listeners = (engine.listeners if observer is None
                           else engine.listeners.then(observer.listener))
        summarizer = engine.summarizer
        if isinstance(summarizer, LlmSummarizer):  # its summaries are model calls of the run
            made = (effects.call_summary if isinstance(effects, SummaryEffects)
                    else functools.partial(self._summary, summarizer))
            summarizer = RunSummaries(summarizer, self._budget, definition.max_tokens,
                                      lambda: self.turn, made)
        # A run with input guards holds its new input back until they passed it (see
        # _model_turn): an input they stop is neither sent nor kept.
        self._new_input = (start.input if engine.guards is not None
                           and engine.guards.checks_input else ())
        #: What the checkpoint leaves out: an input a parallel input guard stopped.
        self._refused_input: tuple[LlmMessage, ...] = ()
        initial = (start.messages[:len(start.messages) - len(self._new_input)]
                   if self._new_input else start.messages)
        self._memory = create_memory(definition.memory_strategy, initial,
                                     token_estimator=engine.token_estimator,
                                     summarizer=summarizer)
        self._prepare = type(self._memory).prepare is not ConversationMemory.prepare
        # A run handed over goes on with the same transcript: its observer's, appended to.
        self.transcript = list(initial) if transcript is None else transcript
        #: The turn in progress (or the last one); ``turns_done``: the turns whose model
        #: answered. A turn whose model call failed, or that a budget, a guard or a cancel
        #: stopped before its answer, is not done: a resumed run makes it again.
        self.turn = self.turns_done = start.turns_done
        self.base_usage = start.base_usage
        self.tool_results: Mapping[str, Any] = start.tool_results
        self.calls = self.prompt_tokens = self.completion_tokens = self.unreported = 0
        self.cache_read = self.cache_written = 0
        self._pool_wait = PoolWait()
        self._observer = observer
        # The conversation whose calls share a prompt prefix: the thread, else this run.
        self._cache_key = (observer.thread_id if observer is not None and observer.thread_id
                           else f"{definition.id}:{ctx.execution_id}")
        self._chat = chat
        # A typed answer streams as Partial chunks too.
        self._typed = None if definition.output is None else TypedAnswers(definition.output)
        self._value: Any = None
        # What an agent this run hands over to is given, as this one was.
        self._stream, self._counters, self._external_tools = sink, counters, external
        if sink is not None and definition.output is not None:
            sink = PartialSink(sink)
        self._sink = sink
        self._external = frozenset(tool.name for tool in external) if external else _NO_NAMES
        self._may_wait = engine.may_wait or bool(external)
        self._tool_definitions = engine.tool_definitions + external if external \
            else engine.tool_definitions
        #: How the round the model just asked for goes (set with its answer).
        self._plan: RoundPlan | None = None
        # None: the chat operator is called as it is, and answers whole or streamed.
        self._effects = effects
        self._call_model: ModelCall | None = None if effects is None else effects.call_model
        self._dispatcher: ToolRound = ToolDispatcher(
            definition.tools, engine.registry, ctx=ctx, codec=engine.codec,
            listeners=self._listeners, context=self._context,
            max_concurrency=definition.max_tool_concurrency,
            default_timeout=definition.tool_timeout, sink=sink, observer=observer,
            conversation=self._memory.messages,
        ) if effects is None else effects.tools
        self._guards = None if engine.guards is None else RunGuards(
            engine.guards, agent_id=definition.id, ctx=ctx, codec=engine.codec,
            listeners=self._listeners, context=self._context, observer=observer)
        self._dispatcher = BudgetedRound(self._dispatcher, self._budget, observer)
        # The guards before the budget: a call they refuse does not run, nor count.
        if self._guards is not None and self._guards.checks_tools:
            self._dispatcher = GuardedRound(self._dispatcher, self._guards, observer)
        if engine.handoffs:
            self._dispatcher = HandoffRound(self._dispatcher, engine.handoffs, observer)

    async def execute(self, pending: PendingRound | None = None) -> AgentOutput:
        # One pool-wait tally for the whole run, opened once (not per model call, which costs
        # a turn some 5%): each model call reports what it added to it.
        started = time.perf_counter()
        with self._pool_wait:
            result = await self._execute(pending, started)
        if isinstance(result, AgentOutput):
            return result
        return await self._handed_over(result, started)

    @staticmethod
    async def _handed_over(execution: Execution, started: float) -> AgentOutput:
        """The run begun at ``started``, gone on with ``execution`` (another agent's), to
        its end."""
        while True:
            with execution._pool_wait:
                result = await execution._execute(None, started)
            if isinstance(result, AgentOutput):
                return result
            execution = result

    async def _execute(self, pending: PendingRound | None,
                       started: float) -> AgentOutput | Execution:
        """The run's output, or the execution it goes on with (another agent's)."""
        max_turns = self._engine.definition.max_turns
        step: steps.Step = steps.next_turn(self.turn, max_turns)
        if pending is not None:
            self.turn = self.turns_done = pending.turn
            step = steps.RunTools(pending.turn, pending.response)
        try:
            while True:
                match step:
                    case steps.CallModel(turn):
                        step = await self._model_turn(turn, max_turns, started)
                    case steps.RunTools(turn, response):
                        step = await self._tools_step(turn, max_turns, response, pending,
                                                      started)
                        pending = None
                    case steps.Finish(exit_reason, response):
                        output = self._output(exit_reason, response)
                        self._exited(exit_reason, started, usage=output.usage)
                        await self._observe_end(exit_reason, output=output)
                        return output
                    case steps.HandOff(turn, call, handoff):
                        return await self._hand_off(turn, call, handoff)
                    case steps.OutOfTurns():
                        self._exited(steps.MAX_TURNS, started)
                        error = MaxTurnsExceededError(agent_id=self._engine.definition.id,
                                                      max_turns=max_turns,
                                                      checkpoint=self.checkpoint())
                        await self._observe_end(steps.MAX_TURNS, error=error)
                        raise error  # noqa: TRY301 -- except MaxTurnsExceededError passes it on
                    case _:
                        assert_never(step)
        except (MaxTurnsExceededError, RunPaused, OutputValidationError):
            raise
        except GuardTripped as tripped:
            stopped = self._tripped(tripped)
            self._exited(steps.GUARDRAIL, started, stopped)
            await self._observe_end(steps.GUARDRAIL, error=stopped, failing=True)
            raise stopped from None
        except BudgetExceededError as error:
            self._exited(steps.BUDGET, started, error)
            await self._observe_end(steps.BUDGET, error=error, failing=True)
            raise
        except asyncio.CancelledError as cancelled:
            self._exited(steps.CANCELLED, started, cancelled)
            agent_id = self._engine.definition.id
            # The cancellation itself propagates, as asyncio needs; its cause carries the
            # checkpoint, so whoever cancelled can save it and resume later.
            cause = AgentRunError(
                f"agent {agent_id!r} was cancelled in turn {self.turn}",
                agent_id=agent_id, checkpoint=self.checkpoint(), exit_reason=steps.CANCELLED,
            )
            await self._observe_end(steps.CANCELLED, error=cause, failing=True)
            raise cancelled from cause
        except Exception as exc:
            self._exited(steps.ERROR, started, exc)
            agent_id = self._engine.definition.id
            await self._observe_end(steps.ERROR, error=exc, failing=True)
            raise AgentRunError(
                f"agent {agent_id!r} failed in turn {self.turn}: {type(exc).__name__}: {exc}",
                agent_id=agent_id, checkpoint=self.checkpoint(), exit_reason=steps.ERROR,
            ) from exc

    async def _tools_step(self, turn: int, max_turns: int, response: LlmResponse,
                          pending: PendingRound | None, started: float) -> steps.Step:
        """Run the tool round ``response`` asked for in ``turn`` (``pending``: the round a
        resumed run continues); the step after it. Raises :class:`RunPaused` when some of
        its calls wait."""
        outcomes, plan = await self._tool_round(turn, response, pending)
        if (plan is not None and plan.waiting) or any(o.waits_on for o in outcomes):
            paused = self._paused(turn, response, plan, outcomes, pending)
            self._exited(steps.PAUSED, started)
            await self._observe_end(steps.PAUSED, error=paused)
            raise paused
        met = self._record_tools(turn, response, outcomes)
        taken = steps.handoff_of(response.tool_calls, self._engine.handoffs)
        if taken is not None:  # the other agent's exit condition applies from now on
            return steps.HandOff(turn, *taken)
        return steps.after_tools(turn, max_turns, response, exit_condition_met=met)

    async def _hand_off(self, turn: int, call: ToolCall, handoff: HandoffDef) -> Execution:
        """The run's execution with the agent ``handoff`` goes to, after telling the
        listeners, the stream and the observer."""
        target = self._engine.handed_to(handoff.agent_id)
        payload = HandoffPayload(turn, handoff.name, self._engine.definition.id,
                                 target.definition.id, call.id, reason_of(call.arguments))
        listeners = self._listeners
        if "on_agent_handoff" in listeners.wanted:
            listeners.notify("on_agent_handoff", self._context, payload)
        if self._stream is not None:
            await self._stream(Handoff(payload.from_agent, payload.to_agent, payload.reason,
                                       turn))
        if self._observer is not None:
            await self._observer.handed_off(payload)
        # A durable runner's effects go on with the other agent's I/O.
        effects = None if self._effects is None else await self._effects.handed_to(payload)
        begun = handed_over(self._memory.messages(), self._engine.definition,
                            target.definition, self.turns_done,
                            self.usage, dict(self.tool_results))
        return target.execution(self._ctx, begun, sink=self._stream, observer=self._observer,
                                effects=effects, tools=self._external_tools,
                                counters=self._counters, transcript=self.transcript)

    async def _observe_end(self, exit_reason: str, *, output: AgentOutput | None = None,
                           error: BaseException | None = None, failing: bool = False) -> None:
        """Tell the observer how the run ended. When the run is failing anyway, a failure to
        record that is logged, so that the run's own error is the one that propagates."""
        observer = self._observer
        if observer is None:
            return
        view = self.checkpoint().conversation
        try:
            await observer.finished(exit_reason, transcript=self.transcript, view=view,
                                    usage=self.usage, turns=self.turns_done, output=output,
                                    error=error)
        except Exception:
            if not failing:
                raise
            _log.warning("could not record the end of run %s", observer.run_id,
                         exc_info=True)

    # -- steps

    async def _model_turn(self, turn: int, max_turns: int, started: float) -> steps.Step:
        """Ask the model in ``turn`` of the run begun at ``started``; the step its answer
        leads to (the next turn when an output guard refused it: the model is asked again).
        The step itself, rather than the answer to a coroutine of its own that makes the
        step: a run in progress keeps each frame of its chain."""
        self.turn = turn
        engine, definition = self._engine, self._engine.definition
        # Input guards first: a run they stop has spent nothing.
        guards = self._guards
        racing = (await self._check_input(guards, turn)
                  if guards is not None and guards.input_pending else None)
        if self._prepare:
            await self._memory.prepare()
        view = tuple(self._memory.messages())  # one copy, the one the request carries
        observer = self._observer
        if observer is not None:
            await observer.before_model_call(turn, view, self.transcript, self.usage)
        listeners = self._listeners
        if "on_agent_turn_started" in listeners.wanted:
            listeners.notify("on_agent_turn_started", self._context,
                             TurnStartedPayload(turn, len(view)))
        budget = self._budget
        max_tokens = budget.max_tokens(definition.max_tokens)
        reserved = await budget.reserve_model_call(view, max_tokens)
        request = LlmRequest(definition.model, view, definition.temperature,
                             max_tokens=max_tokens, stop=definition.stop,
                             tools=self._tool_definitions, tool_choice=definition.tool_choice,
                             seed=definition.seed, fallback=reserved.fallback,
                             parallel_tool_calls=definition.parallel_tool_calls,
                             output=engine.output_request, cache_key=self._cache_key)
        held = None if guards is None else guards.held(self._sink, racing=racing is not None)
        sink = self._sink if held is None else held
        asked = time.perf_counter()
        waited = self._pool_wait.seconds
        try:
            if racing is not None and guards is not None:
                response = await guards.race(self._answer(request, turn, sink), turn, racing,
                                             held)
            else:
                response = await self._answer(request, turn, sink)
        except BaseException as error:
            await budget.release_model_call(reserved, failed=error)
            raise
        self.turns_done = turn
        self._count(turn, response, asked, waited)
        await budget.settle_model_call(reserved, turn, response)
        refusal = (await guards.check_output(turn, response.content)
                   if guards is not None and guards.checks_output(response) else None)
        if refusal is not None:
            self._append(LlmMessage("assistant", WITHHELD.format(name=refusal[0])))
            self._append(LlmMessage.user(refusal[1]))
            return steps.next_turn(turn, max_turns)
        if held is not None:
            await held.release()
        self._append(LlmMessage("assistant", response.content, tool_calls=response.tool_calls))
        if response.tool_calls and self._may_wait:
            from bloge.agent.loop.approval import plan_round  # noqa: PLC0415 -- loaded when a call may wait

            tools = self._engine.tools_by_name
            self._plan = plan = plan_round(response.tool_calls, tools, self._external,
                                           self._ctx, None)
            if plan.waiting and observer is not None:
                observer.calls_waiting(turn, plan.waiting)
        if observer is not None:
            await observer.model_answered(turn, self.transcript, response, self.usage)
        step = steps.after_model(turn, response)
        if self._typed is not None and isinstance(step, steps.Finish):
            return await self._typed_step(turn, max_turns, response, started)
        return step

    async def _check_input(self, guards: RunGuards, turn: int) -> str | None:
        """Check the run's new input with the input guards, then let it join the
        conversation: an input they stop is neither sent nor kept (a parallel guard's trip,
        which comes later, leaves it out of the checkpoint). The text for the parallel
        guards, which check it alongside the model call."""
        racing = await guards.check_input(turn, self._new_input)
        for message in self._new_input:
            self._append(message)
        return racing

    def _count(self, turn: int, response: LlmResponse, started: float, waited: float) -> None:
        """Count the model call of ``turn`` that began at ``started`` (after ``waited``
        seconds of pool wait in the run) and answered ``response``, and tell the listeners."""
        latency = (time.perf_counter() - started) * 1000.0
        self.calls += 1
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        self.cache_read += response.cache_read_tokens
        self.cache_written += response.cache_write_tokens
        if not response.usage_reported:
            self.unreported += 1
        listeners = self._listeners
        if "on_agent_llm_called" in listeners.wanted:
            listeners.notify("on_agent_llm_called", self._context, LlmCalledPayload.of(
                turn, self._engine.definition.model, response, latency,
                (self._pool_wait.seconds - waited) * 1000.0))

    async def _summary(self, summarizer: LlmSummarizer, request: LlmRequest, turn: int,
                       summarized: int) -> LlmResponse:
        """The memory's summary of ``summarized`` messages before turn ``turn``, made by
        ``summarizer`` here and told to the run's listeners."""
        asked = time.perf_counter()
        response = await summarizer.chat(request)
        listeners = self._listeners
        if "on_agent_memory_summarized" in listeners.wanted:
            listeners.notify("on_agent_memory_summarized", self._context,
                             MemorySummarizedPayload.of(
                                 turn, summarizer.model, response,
                                 (time.perf_counter() - asked) * 1000.0, summarized))
        return response

    async def _answer(self, request: LlmRequest, turn: int,
                      sink: ChunkSink | None) -> LlmResponse:
        """The model's answer to ``request``, whole (streamed ones joined, their chunks to
        ``sink``)."""
        call_model = self._call_model
        response = await (self._chat.invoke(request, self._ctx) if call_model is None
                          else call_model(request, turn))
        if isinstance(response, LlmResponse):
            return response
        return await response_of(response, self._chat.name, sink, turn)

    async def _tool_round(self, turn: int, response: LlmResponse, pending: PendingRound | None,
                          ) -> tuple[list[ToolOutcome], RoundPlan | None]:
        """The round's outcomes, and its plan when a call of it may wait."""
        if not self._may_wait and (pending is None or pending.plain):
            # No call may wait: the round runs as it always did.
            recorded = pending.results if pending is not None else None
            return await self._dispatcher.run(turn, response.tool_calls, recorded=recorded), None
        from bloge.agent.loop.approval import run_round  # noqa: PLC0415 -- loaded when a call may wait

        plan = self._round_plan(response, pending)
        return await run_round(self._dispatcher, turn, plan, response.tool_calls), plan

    def _round_plan(self, response: LlmResponse, pending: PendingRound | None) -> RoundPlan:
        """The plan of a new round (made with the model's answer), or of a resumed one."""
        from bloge.agent.loop.approval import plan_round  # noqa: PLC0415 -- loaded when a call may wait

        plan = self._plan
        self._plan = None
        if pending is not None or plan is None:
            return plan_round(response.tool_calls, self._engine.tools_by_name, self._external,
                              self._ctx, pending)
        return plan

    def stopped_round(self) -> PendingRound | None:
        """The tool round the run opens in: a paused run's checkpoint ends with its round's
        assistant message, whose calls no tool message answers yet. Resumed from the
        checkpoint alone (without its :class:`RunPaused`'s round), the calls that wait by
        their tool's rule wait again, never sent to the model unanswered; ``None`` when the
        run opens after a complete turn."""
        view = self._memory.messages()
        if not view or not view[-1].tool_calls:
            return None
        from bloge.agent.loop.approval import stopped_round  # noqa: PLC0415 -- loaded when a call may wait

        return stopped_round(self.turns_done + 1, view[-1], self._engine.tools_by_name,
                             self._external, self._ctx)

    def _paused(self, turn: int, response: LlmResponse, plan: RoundPlan | None,
                outcomes: list[ToolOutcome], pending: PendingRound | None) -> RunPaused:
        """The signal of a run whose round waits (on approvals, results, or paused sub-agent
        runs); its checkpoint ends with the round's assistant message, the calls that ran
        are in its round."""
        checkpoint = AgentCheckpoint(tuple(self._memory.messages()), turn - 1,
                                     dict(self.tool_results), self._engine.definition.id,
                                     self.usage)
        observer = self._observer
        from bloge.agent.loop.approval import paused_run  # noqa: PLC0415 -- loaded when a call may wait

        if observer is None:
            return paused_run(None, turn, response, plan, outcomes, pending, checkpoint)
        return paused_run(observer.run_id, turn, response, plan, outcomes, pending, checkpoint,
                          thread_id=observer.thread_id)

    async def _typed_step(self, turn: int, max_turns: int, response: LlmResponse,
                          started: float) -> steps.Step:
        """A typed agent's answer: the end when it validates; else back to the model with its
        problems while repairs (and turns) remain; else the run fails."""
        typed = self._typed
        assert typed is not None
        verdict = typed.judge(response.content, response.finish_reason)
        if verdict.valid:
            self._value = verdict.value
            return steps.Finish(steps.STOP, response)
        # The problems go back to the model now or, when repairs ran out, when the run resumes
        # (its checkpoint never ends with the invalid answer).
        self._append(LlmMessage.user(repair_prompt(verdict.problems)))
        if typed.may_repair():
            return steps.next_turn(turn, max_turns)
        error = OutputValidationError(
            agent_id=self._engine.definition.id, problems=verdict.problems,
            content=response.content, repairs=typed.repairs, checkpoint=self.checkpoint())
        self._exited(OUTPUT_INVALID, started, error)
        await self._observe_end(OUTPUT_INVALID, error=error)
        raise error

    def _record_tools(self, turn: int, response: LlmResponse,
                      outcomes: list[ToolOutcome]) -> bool:
        """Append the tool messages in the model's order; return whether to exit now."""
        for outcome in outcomes:
            self._append(LlmMessage("tool", outcome.content, tool_call_id=outcome.call.id,
                                    is_error=not outcome.success))
        self.tool_results = {o.call.id: o.result for o in outcomes if o.success}
        condition = self._engine.definition.exit_condition
        if condition is None:
            return False
        scope = {
            "finish_reason": response.finish_reason,
            "content": response.content,
            "turn": turn,
            "tool_calls": [{"id": o.call.id, "name": o.call.name, "arguments": o.arguments}
                           for o in outcomes],
            "tool_results": {o.call.name: o.result for o in outcomes if o.success},
        }
        if self._engine.exit_needs_messages:
            scope["messages"] = list(self.transcript)
        return bool(condition.evaluate(scope))

    def _append(self, message: LlmMessage) -> None:
        self._memory.append(message)
        self.transcript.append(message)

    # -- results

    @property
    def usage(self) -> AgentUsage:
        memory = self._memory.usage
        base = self.base_usage
        return AgentUsage(
            base.llm_calls + self.calls + memory.llm_calls,
            base.prompt_tokens + self.prompt_tokens + memory.prompt_tokens,
            base.completion_tokens + self.completion_tokens + memory.completion_tokens,
            base.unreported_calls + self.unreported,
            tool_calls=self._budget.tool_calls,
            cost_usd=self._budget.cost_usd,
            cache_read_tokens=base.cache_read_tokens + self.cache_read,
            cache_write_tokens=base.cache_write_tokens + self.cache_written,
        )

    def checkpoint(self) -> AgentCheckpoint:
        """The memory's view, without a last tool round that never got its results (the run
        failed or was cancelled while its tools ran): a resumed run asks the model again
        rather than send providers a tool call with no answer."""
        return self._checkpoint(self.usage)

    def _checkpoint(self, usage: AgentUsage) -> AgentCheckpoint:
        view = self._memory.messages()
        if view and view[-1].tool_calls:
            view = view[:-1]
        if self._refused_input:
            view = [m for m in view if all(m is not refused for refused in self._refused_input)]
        return AgentCheckpoint(tuple(view), self.turns_done, dict(self.tool_results),
                               self._engine.definition.id, usage)

    def _tripped(self, tripped: GuardTripped) -> GuardrailTrippedError:
        """The run failure of a tripped guard; its checkpoint leaves out what tripped it (an
        input, an answer, a tool round)."""
        self.turn = self.turns_done = tripped.turns_done
        guard = tripped.guard
        if guard.kind == "input":
            # A sequential guard stopped it before it joined the conversation; a parallel
            # one, after: the checkpoint leaves it out.
            self._refused_input = self._new_input
        return GuardrailTrippedError(agent_id=self._engine.definition.id, guard=guard.name,
                                     kind=guard.kind, verdict=tripped.verdict,
                                     checkpoint=self.checkpoint(), tool_name=tripped.tool_name)

    def _output(self, exit_reason: str, response: LlmResponse) -> AgentOutput:
        usage = self.usage
        return AgentOutput(
            content=response.content,
            finish_reason=response.finish_reason,
            turns_used=self.turns_done,
            messages=tuple(self.transcript),
            tool_results=self.tool_results,
            checkpoint=self._checkpoint(usage),
            exit_reason=exit_reason,
            usage=usage,
            run_id=None if self._observer is None else self._observer.run_id,
            thread_id=None if self._observer is None else self._observer.thread_id,
            output=self._value,
            output_data=(None if self._value is None or self._typed is None
                         else self._typed.schema.dump(self._value)),
        )

    def _exited(self, exit_reason: str, started: float, error: BaseException | None = None,
                *, usage: AgentUsage | None = None) -> None:
        listeners = self._listeners
        if "on_agent_loop_exited" in listeners.wanted:
            usage = self.usage if usage is None else usage  # the output's, when there is one
            listeners.notify("on_agent_loop_exited", self._context, LoopExitedPayload(
                self.turns_done, usage.llm_calls, usage.total_tokens,
                (time.perf_counter() - started) * 1000.0, exit_reason,
                *_described(error),
            ))


def _described(error: BaseException | None) -> tuple[str | None, str | None]:
    """The ``error_type`` and ``error_message`` of a run that ``error`` ended: the message with
    credentials masked, since listeners write it to journals and logs."""
    if error is None:
        return None, None
    return type(error).__name__, mask_credentials(str(error))
