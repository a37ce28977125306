"""Running a dataset: each case (each repetition) is a recorded run of the agent, on a new
thread tagged as an eval, with its tools real or replayed; then its checks judge it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace

from bloge.agent import (
    Agent,
    AgentInput,
    AgentLoopOperator,
    AgentRunError,
    RunPaused,
    StreamingAgentLoopOperator,
)
from bloge.agent.runtime import AgentEngine, RunEffects, RunObserver
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.ids import new_id
from bloge.core.suggest import did_you_mean_hint
from bloge.core.sync import run_sync
from bloge.eval.checks import CustomCheck, JudgeRubric
from bloge.eval.dataset import Case, Dataset, Thresholds, ToolMode
from bloge.eval.environment import REGISTER_EVALUATOR, CheckEnv, Evaluator
from bloge.eval.judge import Judge
from bloge.eval.observed import Observation
from bloge.eval.replay import ReplayEffects
from bloge.eval.results import CaseResult, CaseRun, EvalResults
from bloge.store import (
    EVAL_TAG,
    RecordedRuns,
    Store,
    StoreNotFoundError,
    guest_runs,
    open_store,
)

AgentLike = Agent | AgentLoopOperator | StreamingAgentLoopOperator
Progress = Callable[[Case, CaseRun], None]


def run_dataset(
    dataset: Dataset,
    agent: AgentLike,
    *,
    store: Store | None = None,
    model: str | None = None,
    repeat: int = 1,
    concurrency: int = 4,
    tools: ToolMode | None = None,
    judge: Judge | None = None,
    evaluators: Mapping[str, Evaluator] | None = None,
    thresholds: Thresholds | None = None,
    progress: Progress | None = None,
) -> EvalResults:
    """:func:`arun_dataset`, from synchronous code (any number of times, from any thread)."""
    return run_sync(arun_dataset(
        dataset, agent, store=store, model=model, repeat=repeat, concurrency=concurrency,
        tools=tools, judge=judge, evaluators=evaluators, thresholds=thresholds,
        progress=progress), method="run_dataset")


async def arun_dataset(
    dataset: Dataset,
    agent: AgentLike,
    *,
    store: Store | None = None,
    model: str | None = None,
    repeat: int = 1,
    concurrency: int = 4,
    tools: ToolMode | None = None,
    judge: Judge | None = None,
    evaluators: Mapping[str, Evaluator] | None = None,
    thresholds: Thresholds | None = None,
    progress: Progress | None = None,
) -> EvalResults:
    """Run every case of ``dataset`` ``repeat`` times, at most ``concurrency`` at once, with
    ``agent`` (on ``model`` instead of its own, when given).

    Each run is recorded in ``store`` (else the agent's own, else a ``memory://`` store for
    this call) on a new thread whose metadata ``eval`` names the eval, the case and
    the repetition. ``tools`` overrides the dataset's and the cases' tool modes: ``replay``
    answers tool calls from the case's fixtures, ``real`` runs the tools. ``judge`` scores
    ``judge:`` checks; ``evaluators`` are the functions ``evaluator:`` checks name (else an
    operator of the agent's registry). ``progress`` is called after each run."""
    if repeat < 1 or concurrency < 1:
        raise BlogeUsageError(f"repeat and concurrency are at least 1 (got {repeat}, "
                              f"{concurrency})")
    operator = agent.operator if isinstance(agent, Agent) else agent
    definition = operator.agent_def
    if model is not None:
        definition = replace(definition, model=model)
    engine = AgentEngine(f"eval:{operator.ref}", definition, operator.registry,
                         listeners=operator.listeners, budgets=operator.budgets)
    engine.link(operator.engine.linked)  # the agents its handoffs go to, as the operator's
    known = dict(evaluators or {})
    _check_ready(dataset, judge, known, operator.registry.names())
    dataset.check_tools(definition.id, {tool.name for reached in engine.reached()
                                        for tool in reached.tool_definitions})
    own = store if store is not None else \
        operator.store if isinstance(operator.store, Store) else None
    eval_id = new_id()
    started = time.perf_counter()
    async with _opened(own) as runs_store:
        await _check_threads(dataset, runs_store)
        runner = _Runner(dataset, RecordedRuns(runs_store), engine, eval_id, tools,
                         asyncio.Semaphore(concurrency), progress)
        envs = {case.name: CheckEnv(case, judge, known, operator.registry)
                for case in dataset.cases}
        results = await asyncio.gather(*(
            runner.case(case, repeat, envs[case.name]) for case in dataset.cases))
    return EvalResults(dataset.name, definition.id, definition.model, tuple(results), eval_id,
                       repeat, time.perf_counter() - started, thresholds or dataset.thresholds)


def _check_ready(dataset: Dataset, judge: Judge | None, evaluators: Mapping[str, Evaluator],
                 operators: tuple[str, ...]) -> None:
    """Refuse, before any run, a dataset whose checks need what was not given."""
    for case in dataset.cases:
        for check in case.checks:
            line = "" if case.line is None else f":{case.line}"
            where = f"{dataset.source}{line}: case {case.name!r}"
            if isinstance(check, JudgeRubric) and judge is None:
                raise BlogeUsageError(f"{where} has a judge check and no judge was given")
            if isinstance(check, CustomCheck) and check.evaluator not in evaluators \
                    and check.evaluator not in operators:
                known = [*evaluators, *operators]
                raise BlogeUsageError(
                    f"{where}: no evaluator {check.evaluator!r}"
                    f"{did_you_mean_hint(check.evaluator, known)}: {REGISTER_EVALUATOR}")


async def _check_threads(dataset: Dataset, store: Store) -> None:
    """Refuse, before any run, a case that starts after a thread the store does not have."""
    for index, case in enumerate(dataset.cases):
        if case.thread is None:
            continue
        try:
            await store.get_thread(case.thread)
        except StoreNotFoundError as error:
            raise dataset.error(f"case {case.name!r}: {error}", ("cases", index, "thread"),
                                ) from None


@contextlib.asynccontextmanager
async def _opened(store: Store | None) -> AsyncIterator[Store]:
    """The store given, or a ``memory://`` store for one call (closed after it)."""
    if store is not None:
        yield store
        return
    async with open_store("memory://") as own:
        yield own


class _Runner:
    __slots__ = ("_dataset", "_engine", "_eval_id", "_limit", "_progress", "_runs", "_tools")

    def __init__(self, dataset: Dataset, runs: RecordedRuns, engine: AgentEngine,
                 eval_id: str, tools: ToolMode | None, limit: asyncio.Semaphore,
                 progress: Progress | None) -> None:
        self._dataset = dataset
        self._runs = runs
        self._engine = engine
        self._eval_id = eval_id
        self._tools = tools
        self._limit = limit
        self._progress = progress

    async def case(self, case: Case, repeat: int, env: CheckEnv) -> CaseResult:
        runs = await asyncio.gather(*(self._run(case, index, env) for index in range(repeat)))
        return CaseResult(case.name, case.input_text, tuple(runs))

    def mode(self, case: Case) -> ToolMode:
        return self._tools or case.tools or self._dataset.tools or (
            "replay" if case.fixtures else "real")

    async def _run(self, case: Case, repetition: int, env: CheckEnv) -> CaseRun:
        async with self._limit:
            seen = await self._observe(case, repetition)
            verdicts = tuple([await check.evaluate(seen, env) for check in case.checks])
        done = CaseRun(verdicts, seen.answer, seen.run_id, seen.error, seen.turns, seen.tokens,
                       seen.usage.cost_usd, seen.seconds, tuple(c.name for c in seen.calls))
        if self._progress is not None:
            self._progress(case, done)
        return done

    async def _observe(self, case: Case, repetition: int) -> Observation:
        effects = None
        if self.mode(case) == "replay":
            fixtures = case.fixtures

            def effects(observer: RunObserver) -> RunEffects:
                return ReplayEffects(fixtures, observer)

        metadata = {EVAL_TAG: {"id": self._eval_id, "dataset": self._dataset.name,
                             "case": case.name, "repetition": repetition}}
        messages = case.messages
        if case.thread is not None:
            stored = await self._runs.store.thread_messages(case.thread)
            # The agent's prompt leads the new thread: the stored thread's is not copied, nor
            # what sub-agents wrote on it (their callers' conversation has their results).
            guests = await guest_runs(self._runs.store, stored)
            messages = (*(m.message for m in stored
                          if m.message.role != "system" and m.run_id not in guests),
                        *messages)
        started = time.perf_counter()
        try:
            output = await self._runs.record_run(
                self._engine, AgentInput(messages), OperatorContext.root(),
                thread_id=None, sink=None, metadata=metadata, effects=effects)
        except AgentRunError as error:
            return Observation(None, error=f"{type(error).__name__}: {error}",
                               seconds=time.perf_counter() - started, exit_reason="error",
                               run_id=error.run_id)
        except RunPaused as paused:
            # Nobody is to decide an eval's call: answered later, it would run the real tool.
            if paused.run_id is not None:
                await self._runs.store.cancel_run(paused.run_id)
            return Observation(None, error="the run paused, waiting for approval or tool "
                               "results (an eval's run does not wait: it was cancelled)",
                               seconds=time.perf_counter() - started,
                               exit_reason="paused", run_id=paused.run_id)
        # A new thread: the transcript is the agent's prompt, then the input, then the run's.
        opened = len(messages) + (1 if self._engine.definition.system_prompt else 0)
        return Observation.of_output(output, seconds=time.perf_counter() - started,
                                     opened=opened)
