"""``/metrics``: runs, turns, tool calls, errors and latencies, in the Prometheus text format.

One registry per application (never prometheus-client's global one), fed by a listener on
every served agent and by the end of every run. With several worker processes
(``bloge serve --workers N``) a scrape sees the whole server, whichever worker answers it:
prometheus-client's multiprocess mode, on when ``PROMETHEUS_MULTIPROC_DIR`` names a
directory the workers share (``bloge serve`` makes one, and removes it when it stops), has
every worker write its numbers there and the scrape add them up.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentRunError,
    BudgetExceededError,
    GuardCheckedPayload,
    GuardrailTrippedError,
    LlmCalledPayload,
    MaxTurnsExceededError,
    MemorySummarizedPayload,
    RunPaused,
    ToolCompletedPayload,
    TurnStartedPayload,
)
from bloge.llm.prices import DEFAULT_PRICE_TABLE, PriceTable
from bloge.store import AnswerWaits, Store, answer_waits

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: The bounds (s) of ``bloge_approval_wait_seconds``' buckets.
ANSWER_WAIT_BUCKETS = (1.0, 10.0, 60.0, 300.0, 1800.0, 3600.0, 14400.0, 86400.0)
#: The variable that turns prometheus-client's multiprocess mode on (read when it is imported).
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class Metrics(AgentExecutionListener):
    """The server's metrics; add it to the served agents' listeners."""

    def __init__(self, *, prices: PriceTable | None = None) -> None:
        self._prices = prices or DEFAULT_PRICE_TABLE
        self.registry = CollectorRegistry()
        self.runs = Counter("bloge_runs", "Runs ended, by agent and outcome",
                            ["agent", "outcome"], registry=self.registry)
        self.run_seconds = Histogram("bloge_run_duration_seconds", "How long runs took",
                                     ["agent"], registry=self.registry)
        self.turns = Counter("bloge_turns", "Turns started", ["agent"], registry=self.registry)
        self.model_seconds = Histogram("bloge_model_call_duration_seconds",
                                       "How long model calls took", ["agent"],
                                       registry=self.registry)
        self.pool_wait_seconds = Histogram(
            "bloge_model_pool_wait_seconds",
            "How long model calls waited for a free connection of the provider's pool "
            "(bloge.llm.<provider>.max-connections)", ["agent"],
            buckets=(0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
            registry=self.registry)
        self.tokens = Counter("bloge_tokens", "Tokens the models read and wrote (kind: "
                              "prompt, completion, and of the prompt cache_read and "
                              "cache_write: read from and written to the provider's prompt "
                              "cache)", ["agent", "kind"], registry=self.registry)
        self.registry.register(CacheHitRatio(self.tokens))
        self.fallbacks = Counter("bloge_model_fallbacks", "Model calls answered by a fallback "
                                 "model, by the model that answered", ["agent", "model"],
                                 registry=self.registry)
        self.tool_calls = Counter("bloge_tool_calls", "Tool calls, by tool and outcome",
                                  ["agent", "tool", "outcome"], registry=self.registry)
        self.tool_seconds = Histogram("bloge_tool_call_duration_seconds",
                                      "How long tool calls took", ["agent", "tool"],
                                      registry=self.registry)
        self.errors = Counter("bloge_errors", "Runs that failed, by error type",
                              ["agent", "type"], registry=self.registry)
        self.guard_verdicts = Counter(
            "bloge_guard_verdicts", "Guard verdicts, by guard, kind and verdict (pass, trip, "
            "reject) and whether the guard failed", ["agent", "guard", "kind", "verdict",
                                                     "failed"], registry=self.registry)
        self.cost = Counter("bloge_cost_usd", "What model calls cost, in US dollars at the "
                            "price table's rates (models without a price count 0)",
                            ["agent", "model"], registry=self.registry)
        self.budget_stops = Counter("bloge_budget_stops", "Runs a budget stopped, by scope "
                                    "(run, thread, key) and limit", ["agent", "scope", "limit"],
                                    registry=self.registry)
        self._series: dict[str, _AgentSeries] = {}
        self._answer_waits: dict[str, AnswerWaits] = {}
        self._tallying = asyncio.Lock()

    async def tally_answers(self, store: Store) -> None:
        """Add the calls of paused runs answered since the last tally to
        ``bloge_approval_wait_seconds``: read from the store every worker shares (the first
        tally reads every answer it keeps), so every answer counts, whoever gave it and
        however (HTTP, ``bloge approvals``, ``agent.resume``, a ``/v1`` client, another
        worker), and a scrape of any worker gives the same."""
        async with self._tallying:
            tallied = self._answer_waits
            since = max((waits.latest for waits in tallied.values()), default=None)
            found = await answer_waits(store, ANSWER_WAIT_BUCKETS, since=since)
            for kind, waits in found.items():
                tallied[kind] = waits if kind not in tallied else tallied[kind].plus(waits)

    def _agent(self, agent_id: str) -> _AgentSeries:
        series = self._series.get(agent_id)
        if series is None:
            series = self._series[agent_id] = _AgentSeries(self, agent_id)
        return series

    def render(self) -> bytes:
        """The metrics in the text format: this process's, or in multiprocess mode (see the
        module docs) those of every process."""
        if MULTIPROCESS_DIR not in os.environ:
            return generate_latest(self.registry)
        every = CollectorRegistry()
        collected = multiprocess.MultiProcessCollector(None)  # type: ignore[no-untyped-call]  # prometheus-client leaves it untyped
        every.register(collected)
        every.register(CacheHitRatio(collected))
        return generate_latest(every)

    def render_with(self, waiting: dict[str, tuple[int, float]], now: float) -> bytes:
        """:meth:`render`, then what the store every worker shares says (so the same from
        any worker): the calls paused runs wait on now (``waiting``: kind → count and the
        oldest request), as ``bloge_pending_approvals`` and
        ``bloge_pending_approval_oldest_seconds`` gauges by kind, and how long the answered
        ones waited (see :meth:`tally_answers`), as the ``bloge_approval_wait_seconds``
        histogram by kind."""
        kinds = ("approval", "external")
        counts = [f'bloge_pending_approvals{{kind="{kind}"}} {waiting.get(kind, (0, now))[0]}'
                  for kind in kinds]
        ages = [f'bloge_pending_approval_oldest_seconds{{kind="{kind}"}} {_age(waiting, kind, now)}'
                for kind in kinds]
        lines = [("# HELP bloge_pending_approvals Calls of paused runs waiting now, by kind "
                  "(approval: for a decision; external: for a posted result)"),
                 "# TYPE bloge_pending_approvals gauge", *counts,
                 ("# HELP bloge_pending_approval_oldest_seconds How long the oldest waiting "
                  "call has waited, by kind"),
                 "# TYPE bloge_pending_approval_oldest_seconds gauge", *ages]
        return (self.render() + ("\n".join(lines) + "\n").encode()
                + _answer_waits(self._answer_waits))

    def run_finished(self, agent_id: str, seconds: float, error: BaseException | None) -> None:
        """One run ended after ``seconds``, with ``error`` or without (a run that paused:
        outcome ``paused``)."""
        series = self._agent(agent_id)
        series.run_seconds.observe(seconds)
        if error is None:
            series.succeeded.inc()
        elif isinstance(error, RunPaused):
            self.runs.labels(agent_id, "paused").inc()
        elif isinstance(error, asyncio.CancelledError | TimeoutError):
            self.runs.labels(agent_id, "cancelled").inc()
        else:
            outcome = ("max_turns" if isinstance(error, MaxTurnsExceededError)
                       else "guardrail" if isinstance(error, GuardrailTrippedError)
                       else "budget" if isinstance(error, BudgetExceededError) else "failed")
            self.runs.labels(agent_id, outcome).inc()
            if isinstance(error, BudgetExceededError):
                self.budget_stops.labels(agent_id, error.scope, error.limit_name).inc()
                return
            cause = error.__cause__ if isinstance(error, AgentRunError) else error
            self.errors.labels(agent_id, type(cause or error).__name__).inc()

    def on_agent_turn_started(self, context: AgentCallbackContext,
                              payload: TurnStartedPayload) -> None:
        self._agent(context.operator_ref).turns.inc()

    def on_agent_llm_called(self, context: AgentCallbackContext,
                            payload: LlmCalledPayload) -> None:
        series = self._agent(context.operator_ref)
        series.model_seconds.observe(payload.latency_ms / 1000.0)
        series.pool_wait_seconds.observe(payload.pool_wait_ms / 1000.0)
        self._spent(series, context.operator_ref, payload.model, payload.prompt_tokens,
                    payload.completion_tokens)
        if payload.cache_read_tokens:
            series.cache_read_tokens.inc(payload.cache_read_tokens)
        if payload.cache_write_tokens:
            series.cache_write_tokens.inc(payload.cache_write_tokens)
        if payload.fallback_from:
            self.fallbacks.labels(context.operator_ref, payload.model).inc()

    def on_agent_memory_summarized(self, context: AgentCallbackContext,
                                   payload: MemorySummarizedPayload) -> None:
        """A summary's tokens and price count as a turn's (its time is not a turn's model
        call's)."""
        self._spent(self._agent(context.operator_ref), context.operator_ref, payload.model,
                    payload.prompt_tokens, payload.completion_tokens)

    def _spent(self, series: _AgentSeries, agent_id: str, model: str, prompt: int,
               completion: int) -> None:
        """Count a model call's tokens, and its price when ``model`` has one."""
        series.prompt_tokens.inc(prompt)
        series.completion_tokens.inc(completion)
        price = self._prices.get(model)
        if price is not None:
            self.cost.labels(agent_id, model).inc(price.cost(prompt, completion))

    def on_agent_tool_completed(self, context: AgentCallbackContext,
                                payload: ToolCompletedPayload) -> None:
        if payload.replayed:
            return  # counted when it ran, before its run was resumed
        outcome = "ok" if payload.success else "failed"
        self.tool_calls.labels(context.operator_ref, payload.tool_name, outcome).inc()
        self.tool_seconds.labels(context.operator_ref, payload.tool_name).observe(
            payload.latency_ms / 1000.0)


    def on_agent_guard_checked(self, context: AgentCallbackContext,
                               payload: GuardCheckedPayload) -> None:
        failed = "true" if payload.error_type is not None else "false"
        self.guard_verdicts.labels(context.operator_ref, payload.guard, payload.kind,
                                   payload.verdict, failed).inc()


def _answer_waits(waits: Mapping[str, AnswerWaits]) -> bytes:
    family = HistogramMetricFamily(
        "bloge_approval_wait_seconds", "How long a paused run's call waited for its decision "
        "(approval) or its posted result (external), over the calls the store keeps",
        labels=["kind"])
    for kind in ("approval", "external"):
        found = waits.get(kind)
        if found is None:
            family.add_metric([kind], [(str(bound), 0.0) for bound in ANSWER_WAIT_BUCKETS]
                              + [("+Inf", 0.0)], 0.0)
            continue
        family.add_metric([kind], [*((str(bound), float(n)) for bound, n in
                                     zip(found.bounds, found.within, strict=True)),
                                   ("+Inf", float(found.count))], found.total)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(family))
    return generate_latest(registry)


class _Families:
    """Metric families made at a scrape, as a collector."""

    def __init__(self, *families: Metric) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def _age(waiting: dict[str, tuple[int, float]], kind: str, now: float) -> float:
    count, oldest = waiting.get(kind, (0, now))
    return max(0.0, now - oldest) if count else 0.0


class _AgentSeries:
    """One agent's labelled series, looked up once (``labels()`` costs a lock and a tuple on
    every call)."""

    __slots__ = ("cache_read_tokens", "cache_write_tokens", "completion_tokens", "model_seconds",
                 "pool_wait_seconds", "prompt_tokens", "run_seconds", "succeeded", "turns")

    def __init__(self, metrics: Metrics, agent_id: str) -> None:
        self.run_seconds = metrics.run_seconds.labels(agent_id)
        self.succeeded = metrics.runs.labels(agent_id, "succeeded")
        self.turns = metrics.turns.labels(agent_id)
        self.model_seconds = metrics.model_seconds.labels(agent_id)
        self.pool_wait_seconds = metrics.pool_wait_seconds.labels(agent_id)
        self.prompt_tokens = metrics.tokens.labels(agent_id, "prompt")
        self.completion_tokens = metrics.tokens.labels(agent_id, "completion")
        self.cache_read_tokens = metrics.tokens.labels(agent_id, "cache_read")
        self.cache_write_tokens = metrics.tokens.labels(agent_id, "cache_write")


class CacheHitRatio:
    """``bloge_prompt_cache_hit_ratio{agent}``: the share of the prompt tokens that were read
    from the providers' prompt caches, computed at each scrape from ``bloge_tokens`` (of every
    worker, in multiprocess mode), so that it is never out of step with the counts."""

    def __init__(self, tokens: Collector) -> None:
        self.tokens = tokens

    def collect(self) -> Iterator[Metric]:
        read: dict[str, float] = {}
        prompt: dict[str, float] = {}
        for family in self.tokens.collect():
            if family.name != "bloge_tokens":
                continue
            for sample in family.samples:
                if not sample.name.endswith("_total"):
                    continue
                agent, kind = sample.labels.get("agent", ""), sample.labels.get("kind")
                if kind == "prompt":
                    prompt[agent] = prompt.get(agent, 0.0) + sample.value
                elif kind == "cache_read":
                    read[agent] = read.get(agent, 0.0) + sample.value
        ratio = GaugeMetricFamily("bloge_prompt_cache_hit_ratio", "Share of the prompt tokens "
                                  "read from the providers' prompt caches", labels=["agent"])
        for agent, total in sorted(prompt.items()):
            if total:
                ratio.add_metric([agent], read.get(agent, 0.0) / total)
        yield ratio
