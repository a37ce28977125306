"""``bloge runs cancel`` from elsewhere stops a ``bloge run`` on Temporal as it stops one in
process: the command says it was interrupted, saves the checkpoint, prints the commands that
resume it and exits 130; ``bloge runs resume`` then goes on with the run."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import bloge, started, waiting_agent, write_project
from tests.cli.test_interrupt import QUESTION, resume_command, wait_for
from tests.temporal.conftest import bloge_worker

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


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tool holds while the file ``hold`` is there."""
    write_project(tmp_path, agents=waiting_agent("waiter", "Wait"), source=OPERATORS,
                  operators={"Wait": "wait_for_answer"})
    (tmp_path / "hold").write_text("", encoding="utf-8")
    return tmp_path


@pytest.fixture
def worker(project: Path, on_temporal: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    with bloge_worker(project, on_temporal) as process:
        yield process
        (project / "hold").unlink(missing_ok=True)  # the held tool's thread ends


def cancelled_from_elsewhere(project: Path, on_temporal: dict[str, str],
                             *options: str) -> tuple[subprocess.Popen[str], str, str, str]:
    """``bloge run waiter`` on Temporal, cancelled with ``bloge runs cancel`` while its tool
    holds: the command, its output, and the run's id."""
    process = started("run", "waiter", QUESTION, *options, cwd=project, env=on_temporal)
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
