"""The worker's share of a Temporal turn (bench_temporal_turn.py's workload), bloge beside its
floor, without a service: each side's recorded history replayed (the workflow code in the
sandbox, payload conversion, the bridge), or its activities run through temporalio's
ActivityEnvironment (their input decoded and their result encoded as a worker does), many
times in this process. On a loaded machine CPU time moves more than a change makes; under
callgrind the instruction counts do not: with ``--callgrind`` this process asks callgrind to
dump its counts after each side's runs, so that each dump (``summary:`` line) holds one
side's.

    .venv/bin/python bench/temporal_replay.py record DIR
    .venv/bin/python bench/temporal_replay.py replay|activities DIR [--runs 200] [--callgrind]
    valgrind --tool=callgrind --callgrind-out-file=OUT.%p .venv/bin/python \\
        bench/temporal_replay.py replay DIR --runs 20 --callgrind   # then: grep summary OUT.*
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from bench_temporal import TURNS, agent
from temporal_floor import FloorWorkflow, model, tool
from temporalio import activity
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge.temporal import TemporalOptions, catalogue, served_agents
from bloge.temporal.activities import AgentActivities
from bloge.temporal.worker import PASSED_THROUGH
from bloge.temporal.workflow import AgentWorkflow

SIDES = ("floor", "bloge")
#: The replayer's task queue (``replay-`` and its build id), where bloge's agent is filed.
BUILD_ID = "bench"


async def record(directory: Path) -> None:
    from bench_temporal_turn import side_by_side  # noqa: PLC0415 -- only to record

    async with side_by_side() as both:
        for side in SIDES:
            history = await both.client.get_workflow_handle(f"{side}-shape").fetch_history()
            (directory / f"{side}.json").write_text(history.to_json())


async def _each(histories: Sequence[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


def replaying(directory: Path, runs: int) -> dict[str, Callable[[], Awaitable[None]]]:
    """For each side, ``runs`` replays of its history."""
    definition, registry = agent()
    catalogue.file(f"replay-{BUILD_ID}", served_agents(
        {definition.id: definition}, registry, TemporalOptions(task_queue="bench")))
    replayers = {
        "floor": Replayer(workflows=[FloorWorkflow], build_id=BUILD_ID,
                          workflow_runner=SandboxedWorkflowRunner(
                              restrictions=SandboxRestrictions.default
                              .with_passthrough_modules("temporal_floor"))),
        "bloge": Replayer(workflows=[AgentWorkflow], build_id=BUILD_ID,
                          workflow_runner=SandboxedWorkflowRunner(
                              restrictions=SandboxRestrictions.default
                              .with_passthrough_modules(*PASSED_THROUGH)))}

    def replays(side: str) -> Callable[[], Awaitable[None]]:
        text = (directory / f"{side}.json").read_text()
        histories = [WorkflowHistory.from_json(f"{side}-{n}", text) for n in range(runs)]

        async def replay() -> None:
            results = await replayers[side].replay_workflows(_each(histories))
            assert not results.replay_failures, results.replay_failures

        return replay

    return {side: replays(side) for side in SIDES}


def calling(directory: Path, runs: int) -> dict[str, Callable[[], Awaitable[None]]]:
    """For each side, ``runs`` times the activities its history scheduled, with their inputs."""
    definition, registry = agent()
    served = served_agents({definition.id: definition}, registry,
                           TemporalOptions(task_queue="bench"))
    activities = AgentActivities(served)
    functions: dict[str, Callable[..., Awaitable[Any]]] = {
        "floor.model": model, "floor.tool": tool,
        "bloge.model": activities.model, "bloge.tool": activities.tool}
    environment = ActivityEnvironment()

    converter = DataConverter.default
    # What a worker decodes an activity's input to: its parameters' types, as temporalio's
    # worker reads them (its definition's).
    types = {name: activity._Definition.must_from_callable(function).arg_types  # noqa: SLF001 -- no public way to them
             for name, function in functions.items()}

    def calls(side: str) -> Callable[[], Awaitable[None]]:
        events = json.loads((directory / f"{side}.json").read_text())["events"]
        scheduled = [(attributes["activityType"]["name"],
                      [Payload(metadata={key: base64.b64decode(value)
                                         for key, value in payload["metadata"].items()},
                               data=base64.b64decode(payload["data"]))
                       for payload in attributes["input"]["payloads"]])
                     for event in events
                     if (attributes := event.get("activityTaskScheduledEventAttributes"))]

        async def call() -> None:
            # As a worker runs an activity: its input decoded, its result encoded.
            for _ in range(runs):
                for name, payloads in scheduled:
                    arguments = await converter.decode(payloads, type_hints=types[name])
                    await converter.encode([await environment.run(functions[name],
                                                                  *arguments)])

        return call

    return {side: calls(side) for side in SIDES}


async def dump_counts(label: str) -> None:
    """Ask callgrind to write its counts since the last dump (``label`` in the file)."""
    asked = await asyncio.create_subprocess_exec("callgrind_control", "-d", label,
                                                 str(os.getpid()),
                                                 stdout=asyncio.subprocess.DEVNULL)
    await asyncio.wait_for(asked.wait(), 60)


async def measure(sides: dict[str, Callable[[], Awaitable[None]]], runs: int, rounds: int, *,
                  callgrind: bool) -> None:
    for run in sides.values():  # warm: the sandbox's imports, the caches
        await run()
    cpu: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(1 if callgrind else rounds):
        for side, run in sides.items():
            if callgrind:
                await dump_counts(f"before-{side}")
            used = time.process_time()
            await run()
            cpu[side].append(time.process_time() - used)
            if callgrind:
                await dump_counts(side)
    for side, values in cpu.items():
        print(f"{side}: CPU per turn (ms, by round) "
              f"{', '.join(f'{value / runs / TURNS * 1e3:.3f}' for value in values)}")


async def main(command: str, directory: Path, runs: int, rounds: int, *,
               callgrind: bool) -> None:
    if command == "record":
        await record(directory)
    else:
        sides = (replaying if command == "replay" else calling)(directory, runs)
        await measure(sides, runs, rounds, callgrind=callgrind)
    # Temporal's core runtime still has threads when the interpreter finalizes, which can
    # abort the process then (PyGILState_Release); the figures are out, so leave at once.
    os._exit(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("record", "replay", "activities"))
    parser.add_argument("directory", type=Path)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.command, arguments.directory, arguments.runs, arguments.rounds,
                     callgrind=arguments.callgrind))
