"""``bloge runs cancel`` from elsewhere stops a ``bloge run`` on Temporal as it stops one in
process: the command says it was interrupted, saves the checkpoint, prints the commands that
resume it and exits 130; ``bloge runs resume`` then goes on with the run."""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import BLOGE, bloge, environment
from tests.cli.test_interrupt import QUESTION, resume_command, wait_for
from tests.temporal.conftest import DevServer

OPERATORS = '''
import time
from pathlib import Path


def wait_for_answer(input):
    """The answer comes once the file ``hold`` is gone."""
    if Path("hold").exists():
        Path("tool-started").write_text("started")
    while Path("hold").exists():
        time.sleep(0.05)
    return {"answer": "forty-two"}


wait_for_answer.idempotent = True
'''

AGENT = """
agent waiter {
  model = "gpt-4o"
  tool waitForAnswer : Wait {
    description = "Wait for the answer"
    input { question = tool_args.question }
  }
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tool holds while the file ``hold`` is there."""
    (tmp_path / "holding_operators.py").write_text(OPERATORS, encoding="utf-8")
    (tmp_path / "agents.bloge").write_text(AGENT, encoding="utf-8")
    (tmp_path / "settings.yaml").write_text(textwrap.dedent("""
        bloge:
          agents: {dsl-locations: ["*.bloge"]}
          operators:
            Wait: "holding_operators:wait_for_answer"
    """), encoding="utf-8")
    (tmp_path / "hold").write_text("", encoding="utf-8")
    return tmp_path


@pytest.fixture
def on_temporal(temporal_server: DevServer, task_queue: str) -> dict[str, str]:
    return {"BLOGE_RUNNER": "temporal", "BLOGE_TEMPORAL__ADDRESS": temporal_server.address,
            "BLOGE_TEMPORAL__TASK_QUEUE": task_queue}


@pytest.fixture
def worker(project: Path, on_temporal: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen([str(BLOGE), "worker"], cwd=project,
                               env=environment(on_temporal), stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line.startswith("worker: "), line
    yield process
    (project / "hold").unlink(missing_ok=True)  # the held tool's thread ends
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    process.stderr.close()


def cancelled_from_elsewhere(project: Path, on_temporal: dict[str, str],
                             *options: str) -> tuple[subprocess.Popen[str], str, str, str]:
    """``bloge run waiter`` on Temporal, cancelled with ``bloge runs cancel`` while its tool
    holds: the command, its output, and the run's id."""
    process = subprocess.Popen([str(BLOGE), "run", "waiter", QUESTION, *options], cwd=project,
                               env=environment(on_temporal), text=True,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        wait_for(project / "tool-started", process)
        (run,) = json.loads(bloge("runs", "list", "--json", cwd=project).stdout)
        cancelled = bloge("runs", "cancel", run["id"], cwd=project, env=on_temporal)
        assert cancelled.returncode == 0, cancelled.stderr
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    return process, stdout, stderr, run["id"]


def test_a_run_cancelled_from_elsewhere_is_interrupted_and_resumes_by_its_id(
        project: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    process, _, stderr, run_id = cancelled_from_elsewhere(project, on_temporal)
    assert process.returncode == 130, stderr
    assert "interrupted: agent 'waiter' was cancelled in turn 1" in stderr
    assert f"run {run_id} is recorded; resume it with:" in stderr
    command = resume_command(stderr)
    assert command[:4] == ["bloge", "run", "waiter", "--resume"]
    assert (project / command[4]).is_file()
    (project / "hold").unlink()  # the answer now comes
    resumed = bloge(*resume_command(stderr, "bloge runs resume ")[1:], cwd=project,
                    env=on_temporal)
    assert resumed.returncode == 0, resumed.stderr
    assert "forty-two" in resumed.stdout
    shown = json.loads(bloge("runs", "show", run_id, "--json", cwd=project).stdout)
    # Its round, cut short, is asked of the model again in turn 1 (a Temporal run keeps no
    # tool ledger), from the checkpoint before it: as many turns as a local run resumed.
    assert (shown["status"], shown["turns"]) == ("succeeded", 2)


def test_a_run_cancelled_from_elsewhere_with_json_prints_the_failure_document(
        project: Path, on_temporal: dict[str, str], worker: subprocess.Popen[str]) -> None:
    process, stdout, stderr, run_id = cancelled_from_elsewhere(project, on_temporal, "--json")
    assert process.returncode == 130, stderr
    document = json.loads(stdout)
    assert document["exit_reason"] == "cancelled"
    assert document["error"]["type"] == "AgentRunError"
    assert document["error"]["message"] == "agent 'waiter' was cancelled in turn 1"
    assert document["resume_run_command"] == f"bloge runs resume {run_id}"
    assert (project / document["checkpoint_file"]).is_file()
