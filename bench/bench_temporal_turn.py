"""A Temporal turn against its floor (issue "Performance where users feel it", row
"Temporal turn").

Workload: bench_temporal.py's 5-turn run (four model answers asking for one tool call each,
then a text answer; zero-latency model, trivial tool, no store, no listeners) as bloge's
workflow, against the floor: a bare temporalio workflow (``temporal_floor.py``) doing the
same with one activity per model call and one per tool call. Both on one dev server (the
documented poll setting, ``DEV_SERVER_FLAGS``), each served by one worker in this process,
measured in alternating rounds: per turn (one run at a time, median run / 5) and runs per
second with 20 runs at once. Targets: bloge <= 1.05x the floor per turn, >= 0.95x its runs/s.

    .venv/bin/python bench/bench_temporal_turn.py [--rounds 5] [--runs 10] [--load 100]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench_temporal import DEV_SERVER_FLAGS, TURNS, binary, worker
from temporal_floor import FloorWorkflow, model, tool
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge.temporal import TemporalRunner

CONCURRENT = 20


@contextlib.asynccontextmanager
async def floor_worker(client: Client, task_queue: str) -> AsyncIterator[None]:
    # Its module passed through the sandbox, as bloge's worker passes bloge's.
    restrictions = SandboxRestrictions.default.with_passthrough_modules("temporal_floor")
    async with Worker(client, task_queue=task_queue, workflows=[FloorWorkflow],
                      activities=[model, tool],
                      workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions)):
        yield


Start = Callable[..., Awaitable[Any]]
"""``start(run_id=None)``: one run to its end (its workflow id ``run_id`` if given)."""


@dataclass(frozen=True, slots=True)
class SideBySide:
    """The floor and bloge on one dev server: its client, and how to start a run of each
    (``starts["floor"]``, ``starts["bloge"]``, in that order)."""

    client: Client
    starts: dict[str, Start]


@contextlib.asynccontextmanager
async def side_by_side() -> AsyncIterator[SideBySide]:
    """The floor and bloge on one dev server (``DEV_SERVER_FLAGS``), each served by a worker
    in this process on a task queue of its own, both warm (the sandbox's imports, the caches:
    ``CONCURRENT`` runs each); one run of each, ``floor-shape`` and ``bloge-shape``, left
    for its history to be read."""
    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=binary(), ip="127.0.0.1", ui=False,
            dev_server_extra_args=list(DEV_SERVER_FLAGS)) as env:
        client = env.client
        floor_queue, bloge_queue = f"floor-{uuid.uuid4().hex[:8]}", f"bloge-{uuid.uuid4().hex[:8]}"
        runner = TemporalRunner(client, bloge_queue)

        async def floor_run(run_id: str | None = None) -> Any:
            return await client.execute_workflow(FloorWorkflow.run, "go",
                                                 id=run_id or f"floor-{uuid.uuid4().hex}",
                                                 task_queue=floor_queue)

        async def bloge_run(run_id: str | None = None) -> Any:
            return await runner.run("bench", "go", run_id=run_id)

        async with floor_worker(client, floor_queue), worker(client, bloge_queue):
            for start in (floor_run, bloge_run):
                await asyncio.gather(*(start() for _ in range(CONCURRENT)))
            await floor_run("floor-shape")
            await bloge_run("bloge-shape")
            yield SideBySide(client, {"floor": floor_run, "bloge": bloge_run})


async def per_turn(starts: dict[str, Start], runs: int) -> dict[str, float]:
    """Median seconds per turn of each, their runs alternating one by one."""
    times: dict[str, list[float]] = {name: [] for name in starts}
    for _ in range(runs):
        for name, start in starts.items():
            started = time.perf_counter()
            await start()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) / TURNS for name, values in times.items()}


async def runs_per_second(start: Start, runs: int) -> tuple[float, float]:
    """Runs per second, ``CONCURRENT`` at once, and the CPU time of this process (client
    and worker) per run, ms."""
    limit = asyncio.Semaphore(CONCURRENT)

    async def one() -> None:
        async with limit:
            await start()

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(runs)))
    return (runs / (time.perf_counter() - started),
            (time.process_time() - cpu) / runs * 1e3)


async def history_shape(client: Client, workflow_id: str) -> str:
    """How many events, workflow tasks and activities one run's history has."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    kinds = [event.event_type for event in history.events]
    return (f"{len(kinds)} events, "
            f"{kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)} workflow tasks, "
            f"{kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)} activities")


async def main(rounds: int, runs: int, load: int) -> None:
    figures: dict[str, list[float]] = {}
    async with side_by_side() as served:
        shapes = {name: await history_shape(served.client, f"{name}-shape")
                  for name in served.starts}
        for _ in range(rounds):
            turns = await per_turn(served.starts, runs)
            for name, value in turns.items():
                figures.setdefault(f"{name} turn", []).append(value)
            for name, start in served.starts.items():
                rate, cpu = await runs_per_second(start, load)
                figures.setdefault(f"{name} runs/s", []).append(rate)
                figures.setdefault(f"{name} cpu", []).append(cpu)
    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"dev server: {' '.join(DEV_SERVER_FLAGS)}; one worker each; medians of {rounds} "
          "alternating rounds")
    print(f"one run's history: floor {shapes['floor']}; bloge {shapes['bloge']}")
    print(f"per turn (one run at a time, alternating, {runs} runs each a round):")
    print(f"  floor  {median['floor turn'] * 1e3:7.2f} ms")
    print(f"  bloge  {median['bloge turn'] * 1e3:7.2f} ms   "
          f"{median['bloge turn'] / median['floor turn']:.3f}x floor   (target <= 1.05x)")
    print(f"runs/s ({CONCURRENT} at once, {load} runs a round):")
    print(f"  floor  {median['floor runs/s']:7.1f}")
    print(f"  bloge  {median['bloge runs/s']:7.1f}   "
          f"{median['bloge runs/s'] / median['floor runs/s']:.3f}x floor   (target >= 0.95x)")
    print(f"CPU of client and worker per run at {CONCURRENT} at once: floor "
          f"{median['floor cpu']:.1f} ms, bloge {median['bloge cpu']:.1f} ms "
          f"({median['bloge cpu'] / median['floor cpu']:.2f}x)")
    sys.stdout.flush()
    # Temporal's core runtime still has threads when the interpreter finalizes, which can
    # abort the process then (PyGILState_Release); the figures are out, so leave at once.
    os._exit(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=100)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.runs, arguments.load))
