"""Ctrl-C during ``bloge run``: the first stops the run, saves its checkpoint and prints the
command that resumes it (exit 130), even while a sync tool is stuck in its thread; a second
quits at once. SIGTERM does the same, with exit 143."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import bloge, started, waiting_agent, write_project

OPERATORS = '''
import asyncio
import os
import threading
from pathlib import Path


def wait_for_answer(input):
    """The answer comes at once, unless WAIT_FOREVER says it never comes."""
    if os.environ.get("WAIT_FOREVER"):
        Path("tool-started").write_text("started")
        threading.Event().wait()
    return {"answer": "forty-two"}


# Asking again does no harm: a run stopped in the middle of this tool runs it again on resume
# (a call whose outcome is unknown runs again only when its operator says so).
wait_for_answer.idempotent = True


async def ignore_cancellation(input):
    Path("tool-started").write_text("started")
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            Path("cancellation-ignored").write_text("ignored")
'''

AGENT = (waiting_agent("waiter", "Wait") + waiting_agent("streamer", "Wait", streaming=True)
         + waiting_agent("stubborn", "Stubborn"))

QUESTION = "Please wait for the answer"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tools wait: for ever (sync, in a thread) or ignoring cancellation."""
    return write_project(tmp_path, agents=AGENT, source=OPERATORS, operators={
        "Wait": "wait_for_answer", "Stubborn": "ignore_cancellation"})


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return started(*args, cwd=cwd, env={"WAIT_FOREVER": "1"})


def wait_for(marker: Path, process: subprocess.Popen[str]) -> None:
    """Wait until ``marker`` exists, failing if the command ends first or 30 s pass."""
    deadline = time.monotonic() + 30
    while not marker.exists():
        try:
            process.wait(timeout=0.05)  # wakes at once if the command ends
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"{marker.name} never appeared: {process.communicate()}")
            continue
        pytest.fail(f"bloge ended before {marker.name} appeared: {process.communicate()}")


def interrupted(process: subprocess.Popen[str], project: Path,
                signum: signal.Signals = signal.SIGINT) -> tuple[str, str]:
    wait_for(project / "tool-started", process)
    process.send_signal(signum)
    try:
        return process.communicate(timeout=30)
    finally:
        process.kill()


def resume_command(stderr: str, command: str = "bloge run ") -> list[str]:
    line = next(line.strip() for line in stderr.splitlines()
                if line.strip().startswith(command))
    return shlex.split(line)


def test_ctrl_c_in_a_stuck_sync_tool_saves_a_checkpoint_and_exits_130(project: Path) -> None:
    process = start("run", "waiter", QUESTION, cwd=project)
    _, stderr = interrupted(process, project)
    assert process.returncode == 130, stderr
    assert "interrupted: agent 'waiter' was cancelled in turn 1" in stderr
    command = resume_command(stderr)
    assert command[:4] == ["bloge", "run", "waiter", "--resume"]
    assert (project / command[4]).is_file()


def test_the_checkpoint_of_an_interrupted_run_resumes_it(project: Path) -> None:
    process = start("run", "waiter", QUESTION, cwd=project)
    _, stderr = interrupted(process, project)
    resumed = bloge(*resume_command(stderr)[1:], cwd=project)  # the answer now comes
    assert resumed.returncode == 0, resumed.stderr
    assert "forty-two" in resumed.stdout


def test_an_interrupted_run_resumes_from_the_run_store(project: Path) -> None:
    process = start("run", "waiter", QUESTION, cwd=project)
    _, stderr = interrupted(process, project)
    command = resume_command(stderr, "bloge runs resume ")
    resumed = bloge(*command[1:], cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert "forty-two" in resumed.stdout


def test_ctrl_c_during_a_stream_saves_a_checkpoint_and_exits_130(project: Path) -> None:
    process = start("run", "streamer", QUESTION, cwd=project)
    _, stderr = interrupted(process, project)
    assert process.returncode == 130, stderr
    assert resume_command(stderr)[:4] == ["bloge", "run", "streamer", "--resume"]


def test_ctrl_c_with_json_prints_the_failure_document(project: Path) -> None:
    process = start("run", "waiter", QUESTION, "--json", cwd=project)
    stdout, stderr = interrupted(process, project)
    assert process.returncode == 130, stderr
    document = json.loads(stdout)
    assert document["exit_reason"] == "cancelled"
    assert document["error"]["type"] == "AgentRunError"
    assert (project / document["checkpoint_file"]).is_file()


@pytest.mark.parametrize(("signum", "code", "said"), [
    (signal.SIGINT, 130, "interrupted again: quitting"),
    (signal.SIGTERM, 143, "terminated again: quitting"),
])
def test_a_second_signal_quits_at_once(project: Path, signum: signal.Signals, code: int,
                                       said: str) -> None:
    process = start("run", "stubborn", QUESTION, cwd=project)
    wait_for(project / "tool-started", process)
    process.send_signal(signum)
    wait_for(project / "cancellation-ignored", process)
    process.send_signal(signum)
    try:
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == code, stderr
    assert said in stderr


def test_sigterm_in_a_stuck_sync_tool_names_the_run_and_exits_143(project: Path) -> None:
    process = start("run", "waiter", QUESTION, cwd=project)
    _, stderr = interrupted(process, project, signal.SIGTERM)
    assert process.returncode == 143, stderr
    assert "terminated (SIGTERM): agent 'waiter' was cancelled in turn 1" in stderr
    run_id = resume_command(stderr, "bloge runs resume ")[3]
    assert f"run {run_id} is recorded; resume it with:" in stderr
    assert resume_command(stderr)[:4] == ["bloge", "run", "waiter", "--resume"]


def test_a_run_stopped_by_sigterm_is_recorded_cancelled_and_resumes(project: Path) -> None:
    process = start("run", "waiter", QUESTION, cwd=project)
    _, stderr = interrupted(process, project, signal.SIGTERM)
    command = resume_command(stderr, "bloge runs resume ")
    shown = bloge("runs", "show", command[3], cwd=project)
    assert "status cancelled, exit cancelled" in shown.stdout, shown.stdout
    resumed = bloge(*command[1:], cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert "forty-two" in resumed.stdout


def test_sigterm_with_json_prints_the_failure_document(project: Path) -> None:
    process = start("run", "streamer", QUESTION, "--json", cwd=project)
    stdout, stderr = interrupted(process, project, signal.SIGTERM)
    assert process.returncode == 143, stderr
    document = json.loads(stdout.splitlines()[-1])
    assert document["exit_reason"] == "cancelled"
    assert document["resume_run_command"] == f"bloge runs resume {document['run_id']}"
