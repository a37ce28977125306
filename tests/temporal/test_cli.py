"""``bloge worker`` and ``bloge.runner: temporal``: the support agent end to end on a worker,
kept in the run store like a local run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import WorkflowExecutionStatus

from bloge import AgentOutput
from bloge.store import open_store
from bloge.temporal import Connection, RunCancelledError, TemporalRunner, connect
from tests.cli.conftest import BLOGE, app, bloge, environment  # noqa: F401 -- app: a fixture
from tests.cli.test_approvals_commands import GUARDED
from tests.processes import said_until
from tests.server.test_runs_api import sse_events
from tests.server.test_serve_command import serving
from tests.temporal.conftest import bloge_worker

QUESTION = "How do I reset my password?"


@pytest.fixture
def worker(app: Path, on_temporal: dict[str, str]) -> Iterator[subprocess.Popen[str]]:  # noqa: F811 -- app is the fixture
    with bloge_worker(app, on_temporal) as process:
        yield process


def test_the_support_agent_runs_on_a_worker(app: Path, on_temporal: dict[str, str],  # noqa: F811 -- app: the fixture
                                            worker: subprocess.Popen[str]) -> None:
    local = bloge("run", "customerSupport", QUESTION, "--json", cwd=app)
    assert local.returncode == 0, local.stderr
    remote = bloge("run", "customerSupport", QUESTION, "--json", cwd=app, env=on_temporal)
    assert remote.returncode == 0, remote.stderr
    here, there = json.loads(local.stdout), json.loads(remote.stdout)
    assert there["content"] == here["content"]
    assert there["turns_used"] == here["turns_used"]
    assert there["usage"] == here["usage"]
    assert "workflow " in remote.stderr
    listed = bloge("runs", "list", "--json", cwd=app)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert there["run_id"] in {run["id"] for run in runs}
    shown = bloge("runs", "show", there["run_id"], cwd=app)
    assert shown.returncode == 0, shown.stderr
    compared = bloge("runs", "show", here["run_id"], cwd=app)
    assert _callbacks(shown.stdout) == _callbacks(compared.stdout)


def test_the_triage_example_hands_over_on_a_worker(app: Path, on_temporal: dict[str, str],  # noqa: F811 -- app: the fixture
                                                   worker: subprocess.Popen[str]) -> None:
    question = "I was charged twice for order 1234, please refund me"
    local = bloge("run", "triage", question, "--json", cwd=app)
    assert local.returncode == 0, local.stderr
    remote = bloge("run", "triage", question, "--json", cwd=app, env=on_temporal)
    assert remote.returncode == 0, remote.stderr
    here, there = json.loads(local.stdout), json.loads(remote.stdout)
    assert there["content"] == here["content"]
    calls = [[call["name"] for message in output["messages"]
              for call in message.get("tool_calls", [])] for output in (here, there)]
    assert calls[1] == calls[0] == ["transfer_to_billing", "issueRefund"]
    shown = bloge("runs", "show", there["run_id"], cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert "agent triage → billingAgent" in shown.stdout
    assert "handoff          triage → billingAgent (handoff billing" in shown.stdout
    compared = bloge("runs", "show", here["run_id"], cwd=app)
    assert _callbacks(shown.stdout) == _callbacks(compared.stdout)


def test_a_file_agent_is_refused_on_temporal(app: Path, on_temporal: dict[str, str]) -> None:  # noqa: F811 -- app: the fixture
    source = app / "other.bloge"
    source.write_text('agent other { model = "m" }\n')
    result = bloge("run", str(source), "hi", cwd=app, env=on_temporal)
    assert result.returncode == 2
    assert "'other' is not one of them" in result.stderr


def _callbacks(text: str) -> list[tuple[str, str, str]]:
    """A printed timeline's entries without their times: (turn, callback, tool name)."""
    found = [re.search(r"#\d+\s+(turn \d+)?\s+(\w+)\s+(\S+)", line) for line in text.splitlines()]
    entries = [(m[1] or "", m[2], m[3]) for m in found if m is not None]
    assert len(entries) >= 5, text
    return entries


ANALYST_QUESTION = "How is revenue trending this week?"


def test_a_streamed_run_is_relayed_by_any_bloge_serve(
        app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:  # noqa: F811 -- app: the fixture
    local = bloge("run", "dataAnalyst", ANALYST_QUESTION, "--stream", cwd=app)
    assert local.returncode == 0, local.stderr
    remote = bloge("run", "dataAnalyst", ANALYST_QUESTION, "--stream", cwd=app, env=on_temporal)
    assert remote.returncode == 0, remote.stderr
    # The tokens came from the run store as the worker wrote them: the same answer, live.
    assert remote.stdout == local.stdout
    found = re.search(r"run (\w+) on thread", remote.stderr)
    assert found is not None, remote.stderr
    with serving(app) as url:
        relayed = httpx.get(f"{url}/runs/{found[1]}/stream", timeout=30).text
    events = sse_events(relayed)
    tokens = "".join(e["data"]["text"] for e in events if e["event"] == "token")
    assert tokens == local.stdout.replace("\n", "")  # the printer ends each turn's line
    assert {"tool_start", "tool_end", "done"} <= {e["event"] for e in events}


def test_bloge_serve_starts_runs_on_the_workers(
        app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:  # noqa: F811 -- app: the fixture
    local = bloge("run", "dataAnalyst", ANALYST_QUESTION, "--stream", cwd=app)
    assert local.returncode == 0, local.stderr
    with serving(app, env=on_temporal) as url:
        whole = httpx.post(f"{url}/agents/customerSupport/runs", json={"input": QUESTION},
                           timeout=60)
        assert whole.status_code == 200, whole.text
        assert "KB-RESET-001" in whole.json()["content"]
        streamed = httpx.post(f"{url}/agents/dataAnalyst/runs", timeout=60,
                              json={"input": ANALYST_QUESTION, "stream": True})
        assert streamed.status_code == 200, streamed.text
        run_id = streamed.headers["bloge-run-id"]
        record = httpx.get(f"{url}/runs/{run_id}", timeout=30).json()
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
    events = sse_events(streamed.text)
    tokens = "".join(e["data"]["text"] for e in events if e["event"] == "token")
    assert tokens == local.stdout.replace("\n", "")
    assert events[-1]["event"] == "done"
    assert [int(e["id"]) for e in events] == sorted(int(e["id"]) for e in events)
    assert record["status"] == "succeeded"
    # The server's metrics count the runs' turns, model calls and tool calls from the
    # events it relayed, though the workers made them.
    assert _sample(metrics, 'bloge_turns_total{agent="customerSupport"}') >= 1
    assert _sample(metrics, 'bloge_model_call_duration_seconds_count{agent="dataAnalyst"}') >= 1
    assert any(line.startswith('bloge_tool_calls_total{agent="dataAnalyst"')
               for line in metrics.splitlines())
    assert asyncio.run(_worker_of(app, run_id)) == f"temporal:{on_temporal['BLOGE_TEMPORAL__TASK_QUEUE']}"


def _sample(metrics: str, name: str) -> float:
    """The value of the series ``name`` (with its labels) in a Prometheus text page."""
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in the metrics")


async def _worker_of(project: Path, run_id: str) -> str | None:
    """Who ran the run, as the store has it."""
    store = open_store(f"sqlite:///{project / 'var' / 'bloge.db'}")
    try:
        return (await store.get_run(run_id)).worker
    finally:
        await store.aclose()


STUDY = "Please study in depth what several articles report about data export"


@pytest.fixture
def vetted_app(app: Path) -> Path:  # noqa: F811 -- app is the fixture
    """The application, its researcher's search needing approval (before the worker
    starts)."""
    dsl = app / "examples" / "triage" / "triage.bloge"
    text = dsl.read_text(encoding="utf-8")
    at = text.index("agent researcher")
    dsl.write_text(text[:at] + text[at:].replace(
        "input { query = tool_args.query }",
        "input { query = tool_args.query }\n    requires_approval = true", 1), encoding="utf-8")
    return app


def test_bloge_approvals_approve_sends_the_decision_to_a_child_workflow_and_prints_the_answer(
        vetted_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    with serving(vetted_app, env=on_temporal) as url:
        started = httpx.post(f"{url}/agents/triage/runs", json={"input": STUDY}, timeout=60)
        assert started.status_code == 202, started.text
        paused = started.json()
        caller = paused["id"]
        (waiting,) = paused["pending_approvals"]
        assert (waiting["tool"], waiting["run_id"] != caller) == ("searchKnowledgeBase", True)
        decided = bloge("approvals", "approve", caller, waiting["call_id"], cwd=vetted_app,
                        env=on_temporal)
        assert decided.returncode == 0, decided.stderr
        # It followed the caller to its end, as in process: its answer is printed.
        assert decided.stdout.startswith(f"approved {waiting['call_id']} of run "
                                         f"{waiting['run_id']}\n")
        assert "KB-" in decided.stdout
        with httpx.stream("GET", f"{url}/runs/{caller}/stream", timeout=60,
                          headers={"Last-Event-ID": str(paused["events"])}) as stream:
            kinds = [line[7:] for line in stream.iter_lines() if line.startswith("event: ")]
        record = httpx.get(f"{url}/runs/{caller}", timeout=30).json()
    assert kinds[-1] == "done"
    assert record["status"] == "succeeded"
    assert "KB-" in record["output"]["content"]


def test_bloge_runs_cancel_ends_a_waiting_callers_workflow_and_its_childs(
        vetted_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    with serving(vetted_app, env=on_temporal) as url:
        started = httpx.post(f"{url}/agents/triage/runs", json={"input": STUDY}, timeout=60)
        assert started.status_code == 202, started.text
        paused = started.json()
        caller = paused["id"]
        (waiting,) = paused["pending_approvals"]
        cancelled = bloge("runs", "cancel", caller, cwd=vetted_app, env=on_temporal)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.strip() == f"run {caller}: cancelled"
        ended = asyncio.run(_workflows_ended(on_temporal, caller, waiting["run_id"]))
        assert ended == [WorkflowExecutionStatus.CANCELED] * 2
        approved = bloge("approvals", "approve", caller, waiting["call_id"], cwd=vetted_app,
                         env=on_temporal)
    assert approved.returncode != 0
    assert f"run {caller!r} is cancelled, not waiting for decisions" in approved.stderr


def test_bloge_runs_resume_names_its_flags_when_a_waiting_caller_refuses_new_limits(
        vetted_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    with serving(vetted_app, env=on_temporal) as url:
        started = httpx.post(f"{url}/agents/triage/runs", json={"input": STUDY}, timeout=60)
        assert started.status_code == 202, started.text
        caller = started.json()["id"]
        resumed = bloge("runs", "resume", caller, "--max-turns", "9", "--budget",
                        "model_calls=5", cwd=vetted_app, env=on_temporal)
    assert resumed.returncode == 2, resumed.stderr
    assert ("takes no new limits (--max-turns 9, --budget model_calls=5) there"
            in resumed.stderr)


async def _workflows_ended(on_temporal: dict[str, str],
                           *run_ids: str) -> list[WorkflowExecutionStatus | None]:
    """How the workflows of ``run_ids`` ended, once they did."""
    client = await connect(Connection(on_temporal["BLOGE_TEMPORAL__ADDRESS"]))
    runner = TemporalRunner(client, on_temporal["BLOGE_TEMPORAL__TASK_QUEUE"])
    ended = []
    for run_id in run_ids:
        with contextlib.suppress(RunCancelledError):
            await runner.result(run_id)
        ended.append((await client.get_workflow_handle(run_id).describe()).status)
    return ended


@pytest.fixture
def heralding_app(app: Path) -> Path:  # noqa: F811 -- app is the fixture
    """The application, its triage agent streaming (before the worker starts)."""
    dsl = app / "examples" / "triage" / "triage.bloge"
    text = dsl.read_text(encoding="utf-8")
    dsl.write_text(text.replace("agent triage {", "stream agent triage {", 1), encoding="utf-8")
    return app


def test_bloge_run_stream_shows_a_child_workflows_steps_as_a_local_run_does(
        heralding_app: Path, on_temporal: dict[str, str],
        worker: subprocess.Popen[str]) -> None:
    local = bloge("run", "triage", STUDY, "--stream", cwd=heralding_app)
    assert local.returncode == 0, local.stderr
    remote = bloge("run", "triage", STUDY, "--stream", cwd=heralding_app, env=on_temporal)
    assert remote.returncode == 0, remote.stderr

    def steps(stderr: str) -> list[str]:
        return [line for line in stderr.splitlines() if "↳" in line or "→" in line]

    # The researcher's calls, indented under the call that asked it, as in process.
    assert any("↳ research: → searchKnowledgeBase" in line for line in steps(remote.stderr))
    assert steps(remote.stderr) == steps(local.stderr)
    assert remote.stdout == local.stdout


@pytest.fixture
def guarded_app(app: Path) -> Path:  # noqa: F811 -- app is the fixture
    """The application with an agent whose tool needs approval (before the worker starts)."""
    (app / "examples" / "support" / "guarded.bloge").write_text(GUARDED)
    return app


def test_bloge_run_stops_at_an_approval_on_temporal_and_approve_prints_its_answer(
        guarded_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    run = bloge("run", "guardedSupport", QUESTION, cwd=guarded_app, env=on_temporal)
    assert run.returncode == 3, run.stderr
    found = re.search(r"run (\w+) is awaiting approval:\n  (\S+)  searchKnowledgeBase\(",
                      run.stderr)
    assert found is not None, run.stderr
    run_id, call_id = found[1], found[2]
    assert f"bloge approvals approve {run_id} {call_id}" in run.stderr
    approved = bloge("approvals", "approve", run_id, call_id, cwd=guarded_app, env=on_temporal)
    assert approved.returncode == 0, approved.stderr
    # As in process: the decision, then the answer of the run it continued.
    output = asyncio.run(_output(on_temporal, run_id))
    assert "KB-RESET-001" in output.content
    assert approved.stdout == f"approved {call_id} of run {run_id}\n{output.content}\n"
    shown = bloge("runs", "show", run_id, "--json", cwd=guarded_app)
    assert json.loads(shown.stdout)["status"] == "succeeded"


def test_bloge_run_wait_on_temporal_sends_the_decision_and_prints_the_answer(
        guarded_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    waiting = subprocess.Popen([str(BLOGE), "run", "guardedSupport", QUESTION, "--wait"],
                               cwd=guarded_app, env=environment(on_temporal),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = said_until(waiting, lambda said: bool(said) and "bloge approvals approve" in said[-1],
                      "the command that approves its call", stream="stderr")
    found = re.search(r"bloge approvals approve (\w+) (\S+)", said[-1])
    assert found is not None
    # Only recorded: the waiting command sends it to the workflow, and follows the run.
    decided = bloge("approvals", "approve", found[1], found[2], "--no-continue",
                    cwd=guarded_app, env=on_temporal)
    assert decided.returncode == 0, decided.stderr
    out, _ = waiting.communicate(timeout=60)
    assert waiting.returncode == 0
    assert "KB-RESET-001" in out


def test_bloge_runs_resume_on_temporal_reports_a_run_still_waiting_and_goes_on_once_decided(
        guarded_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    run = bloge("run", "guardedSupport", QUESTION, cwd=guarded_app, env=on_temporal)
    assert run.returncode == 3, run.stderr
    found = re.search(r"bloge approvals approve (\w+) (\S+)", run.stderr)
    assert found is not None, run.stderr
    run_id, call_id = found[1], found[2]
    undecided = bloge("runs", "resume", run_id, cwd=guarded_app, env=on_temporal)
    assert undecided.returncode == 3, undecided.stderr
    assert f"run {run_id} is awaiting approval:\n  {call_id}  " in undecided.stderr
    decided = bloge("approvals", "approve", run_id, call_id, "--no-continue",
                    cwd=guarded_app, env=on_temporal)
    assert decided.returncode == 0, decided.stderr
    resumed = bloge("runs", "resume", run_id, cwd=guarded_app, env=on_temporal)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout


async def _output(on_temporal: dict[str, str], run_id: str) -> AgentOutput:
    """Run ``run_id``'s output, once its workflow ended."""
    client = await connect(Connection(on_temporal["BLOGE_TEMPORAL__ADDRESS"]))
    return await TemporalRunner(client, on_temporal["BLOGE_TEMPORAL__TASK_QUEUE"]).result(run_id)


def _decided(project: Path, env: dict[str, str]) -> str:
    """A ``guardedSupport`` run paused at its approval, the call approved without going on:
    its id."""
    run = bloge("run", "guardedSupport", QUESTION, cwd=project, env=env)
    assert run.returncode == 3, run.stderr
    found = re.search(r"bloge approvals approve (\w+) (\S+)", run.stderr)
    assert found is not None, run.stderr
    decided = bloge("approvals", "approve", found[1], found[2], "--no-continue", cwd=project,
                    env=env)
    assert decided.returncode == 0, decided.stderr
    return found[1]


def test_bloge_runs_resume_max_turns_holds_on_temporal_as_in_process(
        guarded_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    # The run's round is decided, then it is resumed with too few turns for its answer.
    for env in ({}, on_temporal):
        run_id = _decided(guarded_app, env)
        resumed = bloge("runs", "resume", run_id, "--max-turns", "1", cwd=guarded_app, env=env)
        assert resumed.returncode == 1, resumed.stderr
        assert "needed another model call after max_turns=1 turns" in resumed.stderr


@pytest.mark.parametrize(("limit", "why"), [
    ("thread.tokens=500", "keep their run's budget only, not their thread's"),
    ("time=5m", "keeps no time limit"),
])
def test_a_budget_limit_a_workflow_does_not_keep_is_refused_on_temporal(
        guarded_app: Path, on_temporal: dict[str, str], limit: str, why: str) -> None:
    refused = bloge("run", "guardedSupport", QUESTION, "--budget", limit, cwd=guarded_app,
                    env=on_temporal)
    assert refused.returncode == 2
    assert f"error: --budget {limit}: " in refused.stderr
    assert why in refused.stderr


@pytest.fixture
def unpriced_app(app: Path) -> Path:  # noqa: F811 -- app is the fixture
    """The application with ``guardedSupport`` on a model without a price (before the worker
    starts)."""
    (app / "examples" / "support" / "guarded.bloge").write_text(
        GUARDED.replace('"gpt-4o"', '"house-model"'))
    return app


def test_bloge_runs_resume_refuses_a_usd_budget_on_a_model_without_a_price_as_in_process(
        unpriced_app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    unpriced = ("no price for model 'house-model', so a usd budget cannot be kept; add it to "
                "bloge.budgets.prices")
    for env in ({}, on_temporal):
        run_id = _decided(unpriced_app, env)
        refused = bloge("runs", "resume", run_id, "--budget", "usd=1", cwd=unpriced_app,
                        env=env)
        assert refused.returncode == 2, refused.stderr
        assert unpriced in refused.stderr
    # On Temporal, refused before its workflow is told: the run waits on, and goes on once
    # resumed with limits it can keep.
    assert "error: --budget usd=1: no price for model 'house-model'" in refused.stderr
    shown = bloge("runs", "show", run_id, "--json", cwd=unpriced_app)
    assert json.loads(shown.stdout)["status"] == "awaiting_approval"
    resumed = bloge("runs", "resume", run_id, "--budget", "model_calls=5", cwd=unpriced_app,
                    env=on_temporal)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout


def test_a_run_out_of_turns_on_temporal_resumes_by_its_id_as_in_process(
        app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:  # noqa: F811 -- app: the fixture
    ended = {}
    for where, env in (("local", {}), ("temporal", on_temporal)):
        failed = bloge("run", "customerSupport", QUESTION, "--max-turns", "1", "--json",
                       cwd=app, env=env)
        assert failed.returncode == 1, failed.stderr
        document = json.loads(failed.stdout)
        run_id = document["run_id"]
        assert document["resume_run_command"] == f"bloge runs resume {run_id} --max-turns 2"
        before = json.loads(bloge("runs", "show", run_id, "--json", cwd=app).stdout)
        resumed = bloge("runs", "resume", run_id, "--max-turns", "2", "--json", cwd=app,
                        env=env)
        assert resumed.returncode == 0, resumed.stderr
        output = json.loads(resumed.stdout)
        after = json.loads(bloge("runs", "show", run_id, "--json", cwd=app).stdout)
        # The same run on the same thread goes on: its turns and usage count on.
        assert (output["run_id"], output["thread_id"]) == (run_id, before["thread_id"])
        assert (before["status"], after["status"]) == ("failed", "succeeded")
        assert (before["turns"], after["turns"]) == (1, 2)
        ended[where] = (output["content"], output["turns_used"], output["usage"],
                        after["usage"])
    assert ended["temporal"] == ended["local"]


def test_a_run_that_succeeded_on_temporal_is_not_resumed_as_in_process(
        app: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:  # noqa: F811 -- app: the fixture
    for env in ({}, on_temporal):
        ran = bloge("run", "customerSupport", QUESTION, "--json", cwd=app, env=env)
        assert ran.returncode == 0, ran.stderr
        run = json.loads(ran.stdout)
        refused = bloge("runs", "resume", run["run_id"], cwd=app, env=env)
        assert refused.returncode == 2
        assert (f"run {run['run_id']!r} already succeeded; continue its thread "
                f"{run['thread_id']!r} with a new run instead") in refused.stderr
