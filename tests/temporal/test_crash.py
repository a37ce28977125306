"""Crash → resume is Temporal's: worker processes killed in the middle of tool rounds."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from temporalio.client import Client

from bloge.temporal import TemporalRunner
from tests.temporal.conftest import Spawn
from tests.temporal.worker_child import WORKFLOW_TASK_TIMEOUT

#: The load test's size: what this machine (2 shared cores) finishes in well under a minute.
RUNS = 200


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _drained(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    process.stdout.read()


def _kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


async def _told(process: subprocess.Popen[str], wanted: Callable[[set[str]], bool]) -> None:
    """Read what the worker process says of its tool calls until ``wanted`` holds of it."""
    assert process.stdout is not None
    said: set[str] = set()
    async with asyncio.timeout(60):
        while not wanted(said):
            line = await asyncio.to_thread(process.stdout.readline)
            assert line, "the worker process ended"
            said.add(line.strip())


async def test_a_worker_killed_in_a_tool_round_leaves_the_run_to_another(
        client: Client, task_queue: str, spawn: Spawn, tmp_path: Path) -> None:
    first = spawn(hang_gate=True)
    runner = TemporalRunner(client, task_queue, workflow_task_timeout=WORKFLOW_TASK_TIMEOUT)
    handle = await runner.start("counter", "crash", run_id="run-crash")
    count_log, gate_log = tmp_path / "count.log", tmp_path / "gate.log"
    # The round is half done: count has completed, gate hangs on the first worker.
    await _told(first, lambda said: {"counted run-crash:1:c1", "gate run-crash:1:c2"} <= said)
    spawn()
    _kill(first)
    async with asyncio.timeout(120):
        output = await runner.result(handle.id)
    assert output.content == "answer: counted crash | opened crash"
    # The completed activity did not run again; the one that was running ran on the other.
    assert _lines(count_log) == ["run-crash:1:c1"]
    assert _lines(gate_log) == ["run-crash:1:c2", "run-crash:1:c2"]


async def test_two_workers_finish_every_run_while_one_is_killed(
        client: Client, task_queue: str, spawn: Spawn, tmp_path: Path) -> None:
    first = spawn()
    second = spawn()
    drain = asyncio.create_task(asyncio.to_thread(_drained, second))  # keep its pipe empty
    # Every other run makes its model calls local activities: a worker's death then costs
    # it the model call in flight, never a second run of its tool calls.
    runners = [TemporalRunner(client, task_queue, workflow_task_timeout=WORKFLOW_TASK_TIMEOUT,
                              local_model_calls=local) for local in (False, True)]
    handles = await asyncio.gather(*(runners[n % 2].start("counter", f"job {n}",
                                                          run_id=f"load-{n}")
                                     for n in range(RUNS)))
    runner = runners[0]
    count_log = tmp_path / "count.log"
    # Killed in the middle: after it has counted for a good part of the runs.
    await _told(first, lambda said: sum(s.startswith("counted") for s in said) >= RUNS // 8)
    _kill(first)
    async with asyncio.timeout(120):  # a stuck run fails the test rather than hang it
        outputs = await asyncio.gather(*(runner.result(handle.id) for handle in handles))
    _kill(second)
    await drain
    counted = Counter(_lines(count_log))
    # Every run answered; the counting tool ran at most once per call, and exactly once for
    # every call whose result a run got.
    assert len(outputs) == RUNS
    assert all(count == 1 for count in counted.values())
    for n, output in enumerate(outputs):
        (count_message,) = [m for m in output.messages if m.tool_call_id == "c1"]
        if count_message.is_error:
            assert "outcome of tool 'count' is unknown" in count_message.content
        else:
            assert counted[f"load-{n}:1:c1"] == 1
        assert output.content.startswith("answer: ")
