"""``bloge.budgets`` with ``bloge worker`` and ``bloge.runner: temporal``: the settings' default
run limits hold on a worker as in a local run; what a worker cannot keep is refused at the
start (thread and key budgets) or said at the worker's start (``time``)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import BLOGE, app, bloge, environment  # noqa: F401 -- app: a fixture
from tests.processes import said_until
from tests.temporal.conftest import bloge_worker

QUESTION = "How do I reset my password?"
#: ``bloge.budgets.run: {model_calls: 1}``: the support agent's answer needs a second call.
ONE_CALL = {"BLOGE_BUDGETS__RUN__MODEL_CALLS": "1"}


def test_a_workers_default_run_budget_stops_a_run_as_a_local_run(
        app: Path, on_temporal: dict[str, str]) -> None:  # noqa: F811 -- app: the fixture
    local = bloge("run", "customerSupport", QUESTION, cwd=app, env=ONE_CALL)
    with bloge_worker(app, {**on_temporal, **ONE_CALL}):
        remote = bloge("run", "customerSupport", QUESTION, cwd=app,
                       env={**on_temporal, **ONE_CALL})
    assert local.returncode == remote.returncode == 1, (local.stderr, remote.stderr)
    for result in (local, remote):
        assert "the run's model_calls budget of 1 would be exceeded (used 1" in result.stderr
        # The command that lets it go on raises the limit that stopped it.
        assert re.search(r"bloge runs resume \w+ --budget model_calls=3\n", result.stderr), \
            result.stderr
    listed = bloge("runs", "list", "--json", cwd=app)
    assert listed.returncode == 0, listed.stderr
    assert [run["exit_reason"] for run in json.loads(listed.stdout)] == ["budget", "budget"]


@pytest.mark.parametrize(("variable", "setting"), [
    ("BLOGE_BUDGETS__THREAD__TOKENS", "bloge.budgets.thread"),
    ("BLOGE_BUDGETS__PER_KEY__USD", "bloge.budgets.per-key")])
def test_a_worker_refuses_budgets_its_runs_would_not_keep(
        app: Path, on_temporal: dict[str, str], variable: str,  # noqa: F811 -- app: the fixture
        setting: str) -> None:
    refused = {**on_temporal, variable: "1000"}
    worker = subprocess.run([str(BLOGE), "worker"], cwd=app, env=environment(refused),
                            capture_output=True, text=True, check=False, timeout=60)
    assert worker.returncode == 2
    assert f"bloge worker: {setting}: runs on Temporal workers keep their run's budget only" \
        in worker.stderr
    run = bloge("run", "customerSupport", QUESTION, cwd=app, env=refused)
    assert run.returncode == 2
    assert f"bloge.runner: temporal: {setting}: runs on Temporal workers" in run.stderr
    assert "remove it, or run with bloge.runner: local" in run.stderr


def test_an_agent_with_a_thread_budget_is_refused_by_bloge_run_on_temporal(
        app: Path, on_temporal: dict[str, str]) -> None:  # noqa: F811 -- app: the fixture
    (app / "examples" / "thrifty.bloge").write_text(
        'agent thrifty {\n  model = "offline"\n  budget thread { usd = 5.00 }\n}\n')
    result = bloge("run", "thrifty", "hi", cwd=app, env=on_temporal)
    assert result.returncode == 2
    assert "agent 'thrifty' has a thread budget (budget thread { … })" in result.stderr


def test_a_worker_says_at_its_start_that_it_keeps_no_default_time(
        app: Path, on_temporal: dict[str, str]) -> None:  # noqa: F811 -- app: the fixture
    with bloge_worker(app, {**on_temporal, "BLOGE_BUDGETS__RUN__TIME": "5m"}) as worker:
        (warning,) = said_until(worker, bool, "its warning", stream="stderr")
    assert warning.startswith("worker: warning: bloge.budgets.run.time (300s) is not kept by "
                              "runs on Temporal workers"), warning


def test_bloge_serve_on_temporal_refuses_key_budgets(app: Path) -> None:  # noqa: F811 -- app: the fixture
    result = bloge("serve", cwd=app, env={"BLOGE_RUNNER": "temporal",
                                          "BLOGE_BUDGETS__KEYS": '{"key:1a2b3c4d5e6f": {"usd": 100}}'})
    assert result.returncode == 2
    assert ("bloge serve (bloge.runner: temporal): bloge.budgets.keys.key:1a2b3c4d5e6f: runs on "
            "Temporal workers keep their run's budget only") in result.stderr
