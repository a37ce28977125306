"""What the DSL and the settings make of Temporal's knobs, and the settings themselves (no
server needed)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from bloge.agent import with_budget_limits
from bloge.core.errors import BlogeUsageError
from bloge.llm.providers import RetryPolicy
from bloge.temporal import Connection, TemporalOptions, connect
from bloge.temporal.catalogue import served
from bloge.temporal.options import FINAL_PROVIDER_ERROR, plan_for
from bloge_config import BlogeSettings, LoadedSettings
from bloge_container import temporal
from tests.cli.conftest import app, bloge  # noqa: F401 -- app: a fixture
from tests.temporal import agents


def test_the_dsl_and_the_retry_settings_become_activity_options(tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    options = TemporalOptions(activity_timeout=120.0, heartbeat_timeout=5.0, tool_attempts=4,
                              model_retry=RetryPolicy(max_attempts=6, initial_backoff=0.5,
                                                      multiplier=3.0, max_backoff=20.0))
    counter = plan_for(definitions["counter"], registry, options)
    retry = counter.model["retry_policy"]
    assert (retry.maximum_attempts, retry.initial_interval, retry.backoff_coefficient,
            retry.maximum_interval) == (6, timedelta(seconds=0.5), 3.0, timedelta(seconds=20))
    assert FINAL_PROVIDER_ERROR in retry.non_retryable_error_types
    assert counter.model["start_to_close_timeout"] == timedelta(seconds=120)
    assert counter.model["heartbeat_timeout"] == timedelta(seconds=5)
    # count is not idempotent: one attempt; gate is: tool-attempts.
    assert counter.tools["count"].activity["retry_policy"].maximum_attempts == 1
    assert counter.tools["gate"].activity["retry_policy"].maximum_attempts == 4
    assert "schedule_to_close_timeout" not in counter.tools["gate"].activity
    # The agent's tool_timeout bounds every attempt of a call together.
    slow = plan_for(definitions["slow"], registry, options).tools["gate"]
    assert slow.timeout == 0.5
    assert slow.activity["start_to_close_timeout"] == timedelta(seconds=0.5)
    assert slow.activity["schedule_to_close_timeout"] == timedelta(seconds=0.5)
    assert slow.activity["heartbeat_timeout"] == timedelta(seconds=0.5)
    # A local model call: the same timeout and retries, no heartbeat.
    assert "heartbeat_timeout" not in counter.local_model
    assert counter.local_model["retry_policy"] is retry
    assert counter.local_model["start_to_close_timeout"] == timedelta(seconds=120)


def test_options_are_checked() -> None:
    with pytest.raises(BlogeUsageError, match="task queue needs a name"):
        TemporalOptions(task_queue="")
    with pytest.raises(BlogeUsageError, match="heartbeat_timeout must be > 0"):
        TemporalOptions(heartbeat_timeout=0)


def test_the_settings_make_the_connection_and_the_options() -> None:
    settings = BlogeSettings.model_validate({
        "runner": "temporal",
        "temporal": {"address": "temporal.example:7233", "namespace": "prod",
                     "task-queue": "agents", "api-key": "tc-secret-key", "tool-attempts": 2},
        "llm": {"retry": {"max-attempts": 7}}})
    connection = temporal.connection(settings)
    assert (connection.address, connection.namespace, connection.api_key) == (
        "temporal.example:7233", "prod", "tc-secret-key")
    assert "tc-secret-key" not in repr(connection)
    assert "tc-secret-key" not in repr(settings)
    chosen = temporal.options(settings)
    assert (chosen.task_queue, chosen.tool_attempts, chosen.model_retry.max_attempts) == (
        "agents", 2, 7)
    # A worker's providers try once; the activity's policy keeps the configured attempts.
    worker = temporal.worker_settings(LoadedSettings.in_code(settings)).settings
    assert worker.llm.retry.max_attempts == 1
    assert worker.temporal == settings.temporal
    # Runs start with activities for their model calls unless local-model-calls says not.
    assert temporal.runs_store(settings, None).local_model_calls is False
    local = BlogeSettings.model_validate({"runner": "temporal",
                                          "temporal": {"local-model-calls": True}})
    assert temporal.runs_store(local, None).local_model_calls is True


def test_the_api_key_is_masked_in_bloge_config(app: Path) -> None:  # noqa: F811 -- the fixture
    shown = bloge("config", cwd=app, env={"BLOGE_TEMPORAL__API_KEY": "tc-secret-key"})
    assert shown.returncode == 0, shown.stderr
    assert "tc-secret-key" not in shown.stdout + shown.stderr
    assert "temporal" in shown.stdout


def test_an_unreachable_service_is_named_without_the_key() -> None:
    connection = Connection("127.0.0.1:9", api_key="tc-secret-key")
    with pytest.raises(BlogeUsageError) as caught:
        asyncio.run(connect(connection))
    assert "cannot reach the Temporal service at 127.0.0.1:9" in str(caught.value)
    assert "tc-secret-key" not in str(caught.value)


def test_mutual_tls_needs_both_files(tmp_path: Path) -> None:
    cert = tmp_path / "client.pem"
    cert.write_text("x")
    with pytest.raises(BlogeUsageError, match="needs both tls-client-cert and tls-client-key"):
        Connection(tls_client_cert=cert).tls_config()
    with pytest.raises(BlogeUsageError, match="tls-server-ca: cannot read"):
        Connection(tls_server_ca=tmp_path / "missing.pem").tls_config()


def test_the_long_run_settings_reach_the_workers_and_the_runs(tmp_path: Path) -> None:
    settings = BlogeSettings.model_validate({
        "runner": "temporal",
        "temporal": {"continue-as-new-events": 500, "continue-as-new-bytes": "4MiB",
                     "max-payload-bytes": "1MB"}})
    chosen = temporal.options(settings)
    assert (chosen.continue_as_new_events, chosen.continue_as_new_bytes,
            chosen.max_payload_bytes) == (500, 4 * 1024 * 1024, 1_000_000)
    registry = agents.registry(tmp_path / "count.log")
    limits = plan_for(agents.definitions(registry)["counter"], registry, chosen).limits
    assert (limits.continue_as_new_events, limits.max_payload_bytes) == (500, 1_000_000)
    assert temporal.runs_store(settings, None).max_payload_bytes == 1_000_000
    # The defaults stay under Temporal's limits (51,200 events, 50 MB, 2 MiB a payload).
    default = temporal.options(BlogeSettings())
    assert default.continue_as_new_events < 51_200
    assert default.continue_as_new_bytes < 50 * 1024 * 1024
    assert default.max_payload_bytes < 2 * 1024 * 1024
    with pytest.raises(BlogeUsageError, match="max_payload_bytes must be >= 16384"):
        TemporalOptions(max_payload_bytes=100)
    with pytest.raises(BlogeUsageError, match="continue_as_new_events must be >= 0"):
        TemporalOptions(continue_as_new_events=-1)


def test_a_workers_engine_keeps_its_agents_budget_but_its_time_limit(tmp_path: Path) -> None:
    # A workflow decides alike when replayed, never by the wall clock.
    registry = agents.registry(tmp_path / "count.log")
    definition = with_budget_limits(agents.definitions(registry)["counter"],
                                    {"tokens": 100, "time": "30s"})
    engine = served(definition, registry, TemporalOptions()).engine(budget={"usd": 1.0})
    assert engine.definition.budget is not None
    assert engine.definition.budget.limits() == {"tokens": 100, "usd": 1.0}
