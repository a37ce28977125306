"""bench_temporal_turn.py's workload on one dev server for the floor and two versions of bloge
(this tree, and another one given by path: ``git archive COMMIT bloge | tar -x -C DIR``),
each served by a worker process of its own, their runs interleaved: wall time per turn (one run
at a time), each worker process's CPU time per turn, and runs per second with 20 at once. On
a loaded machine, the figures of one round move by more than a change makes; the rounds
interleave so that the load falls on all three alike.

    .venv/bin/python bench/temporal_ab.py DIR [--rounds 6] [--runs 25] [--load 100]
    .venv/bin/python bench/temporal_ab.py --worker ADDRESS TASK_QUEUE floor|bloge
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_temporal import DEV_SERVER_FLAGS, TURNS, binary, worker
from bench_temporal_turn import CONCURRENT, floor_worker
from checkout import ROOT, child_env
from temporal_floor import FloorWorkflow
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bloge.temporal import TemporalRunner

BENCH = Path(__file__).resolve().parent


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_worker(address: str, task_queue: str, kind: str,
                 bloge_at: str | None) -> subprocess.Popen[str]:
    """A worker process (this script with --worker), once it polls; ``bloge_at``: the
    directory whose ``bloge`` package it imports instead of this tree's."""
    # Its checkout comes first on its path: this tree's when none is given (main's venv
    # installs the main checkout's, which would otherwise stand in for this one).
    env = child_env(Path(bloge_at) if bloge_at else ROOT)
    process = subprocess.Popen([sys.executable, __file__, "--worker", address, task_queue,
                                kind], stdout=subprocess.PIPE, text=True, env=env, cwd=BENCH)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


async def serve(address: str, task_queue: str, kind: str) -> None:
    client = await Client.connect(address)
    async with (floor_worker if kind == "floor" else worker)(client, task_queue):
        print("ready", flush=True)
        await asyncio.Event().wait()


Start = Callable[[], Awaitable[Any]]


def floor_start(client: Client, task_queue: str) -> Start:
    return lambda: client.execute_workflow(FloorWorkflow.run, "go",
                                           id=f"floor-{uuid.uuid4().hex}", task_queue=task_queue)


def bloge_start(runner: TemporalRunner) -> Start:
    return lambda: runner.run("bench", "go")


async def main(other: str, rounds: int, runs: int, load: int) -> None:
    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=binary(), ip="127.0.0.1", ui=False,
            dev_server_extra_args=list(DEV_SERVER_FLAGS)) as env:
        client = env.client
        address = client.service_client.config.target_host
        processes: dict[str, subprocess.Popen[str]] = {}
        starts: dict[str, Start] = {}
        for name, kind, bloge_at in (("floor", "floor", None), ("other", "bloge", other),
                                     ("this", "bloge", None)):
            queue = f"{name}-{uuid.uuid4().hex[:8]}"
            processes[name] = start_worker(address, queue, kind, bloge_at)
            starts[name] = (floor_start(client, queue) if kind == "floor"
                            else bloge_start(TemporalRunner(client, queue)))
        try:
            for start in starts.values():  # warm: the sandbox's imports, the caches
                await asyncio.gather(*(start() for _ in range(CONCURRENT)))
            wall: dict[str, list[float]] = {name: [] for name in starts}
            cpu: dict[str, list[float]] = {name: [] for name in starts}
            rate: dict[str, list[float]] = {name: [] for name in starts}
            for _ in range(rounds):
                for _ in range(runs):
                    for name, start in starts.items():
                        pid = processes[name].pid
                        began, used = time.perf_counter(), cpu_seconds(pid)
                        await start()
                        wall[name].append(time.perf_counter() - began)
                        cpu[name].append(cpu_seconds(pid) - used)
                for name, start in starts.items():
                    rate[name].append(await runs_per_second(start, load))
        finally:
            for process in processes.values():
                process.terminate()
                process.wait()
    median, mean = statistics.median, statistics.mean
    print(f"dev server: {' '.join(DEV_SERVER_FLAGS)}; {rounds} rounds of {runs} runs one at a "
          f"time each, then {load} runs {CONCURRENT} at once; other: {other}")
    for name in starts:
        print(f"{name:5}  wall/turn {median(wall[name]) / TURNS * 1e3:6.2f} ms "
              f"({median(wall[name]) / median(wall['floor']):.3f}x)   worker CPU/turn "
              f"{mean(cpu[name]) / TURNS * 1e3:5.2f} ms "
              f"({mean(cpu[name]) / mean(cpu['floor']):.3f}x)   runs/s "
              f"{median(rate[name]):5.1f} ({median(rate[name]) / median(rate['floor']):.3f}x; "
              f"rounds {', '.join(f'{value:.1f}' for value in rate[name])})")
    sys.stdout.flush()
    # Temporal's core runtime still has threads when the interpreter finalizes, which can
    # abort the process then (PyGILState_Release); the figures are out, so leave at once.
    os._exit(0)


async def runs_per_second(start: Start, runs: int) -> float:
    limit = asyncio.Semaphore(CONCURRENT)

    async def one() -> None:
        async with limit:
            await start()

    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(runs)))
    return runs / (time.perf_counter() - began)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("other", nargs="?", help="a directory holding another bloge package")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--load", type=int, default=100)
    parser.add_argument("--worker", nargs=3, metavar=("ADDRESS", "TASK_QUEUE", "KIND"))
    arguments = parser.parse_args()
    if arguments.worker:
        asyncio.run(serve(*arguments.worker))
    elif arguments.other is None:
        parser.error("give the directory of the other bloge package")
    else:
        asyncio.run(main(arguments.other, arguments.rounds, arguments.runs, arguments.load))
