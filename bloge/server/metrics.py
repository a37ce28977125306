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
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from bloge.agent import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentRunError,
    LlmCalledPayload,
    MaxTurnsExceededError,
    ToolCompletedPayload,
    TurnStartedPayload,
)

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: The variable that turns prometheus-client's multiprocess mode on (read when it is imported).
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class Metrics(AgentExecutionListener):
    """The server's metrics; add it to the served agents' listeners."""

    def __init__(self) -> None:
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
        self._series: dict[str, _AgentSeries] = {}

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

    def run_finished(self, agent_id: str, seconds: float, error: BaseException | None) -> None:
        """One run ended after ``seconds``, with ``error`` or without."""
        series = self._agent(agent_id)
        series.run_seconds.observe(seconds)
        if error is None:
            series.succeeded.inc()
        elif isinstance(error, asyncio.CancelledError | TimeoutError):
            self.runs.labels(agent_id, "cancelled").inc()
        else:
            outcome = "max_turns" if isinstance(error, MaxTurnsExceededError) else "failed"
            self.runs.labels(agent_id, outcome).inc()
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
        series.prompt_tokens.inc(payload.prompt_tokens)
        series.completion_tokens.inc(payload.completion_tokens)
        if payload.cache_read_tokens:
            series.cache_read_tokens.inc(payload.cache_read_tokens)
        if payload.cache_write_tokens:
            series.cache_write_tokens.inc(payload.cache_write_tokens)
        if payload.fallback_from:
            self.fallbacks.labels(context.operator_ref, payload.model).inc()

    def on_agent_tool_completed(self, context: AgentCallbackContext,
                                payload: ToolCompletedPayload) -> None:
        if payload.replayed:
            return  # counted when it ran, before its run was resumed
        outcome = "ok" if payload.success else "failed"
        self.tool_calls.labels(context.operator_ref, payload.tool_name, outcome).inc()
        self.tool_seconds.labels(context.operator_ref, payload.tool_name).observe(
            payload.latency_ms / 1000.0)


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
