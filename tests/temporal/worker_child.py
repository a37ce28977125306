"""A worker process the crash tests start and kill: the test agents on one task queue.

Run as ``python -m tests.temporal.worker_child ADDRESS TASK_QUEUE COUNT_LOG GATE_LOG
[--hang-gate] [--store URL --traces URL]``. It prints ``ready`` once it polls, then a line per
tool call as it runs (``counted KEY``, ``gate KEY``), and serves until it is killed. With
``--store`` and ``--traces``, its runs are recorded in that store and traced to that OTLP
endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from bloge.store import open_store
from bloge.temporal import (
    Connection,
    TemporalOptions,
    agent_worker,
    connect,
    served_agents,
)
from bloge.tracing import RunTracing
from tests.temporal import agents

#: Short enough that a killed worker's calls move on quickly, long enough for a busy machine.
HEARTBEAT_TIMEOUT = 2.0
#: A run's first workflow task imports the workflow's modules into Temporal's sandbox: on a
#: busy 2-core machine that took more than 2 s, and a task that times out is tried again at
#: the same cost, so the run never started. A killed worker's tasks move on after this long.
WORKFLOW_TASK_TIMEOUT = 10.0


def options(task_queue: str) -> TemporalOptions:
    return TemporalOptions(task_queue=task_queue, heartbeat_timeout=HEARTBEAT_TIMEOUT,
                           workflow_task_timeout=WORKFLOW_TASK_TIMEOUT)


#: One announcement at a time: tools run in threads, and ``print`` writes its text and its
#: newline in two writes, so that two calls at once could print ``counted acounted b`` and an
#: empty line, and a test counting lines that start with ``counted`` waited for ever.
_ANNOUNCING = threading.Lock()


def announce(line: str) -> None:
    with _ANNOUNCING:
        print(line, flush=True)  # noqa: T201 -- the parent reads these lines


async def serve(address: str, task_queue: str, count_log: Path, gate_log: Path, *,
                hang_gate: bool, store_url: str | None = None,
                traces: str | None = None) -> None:
    client = await connect(Connection(address))
    store = None if store_url is None else open_store(store_url)
    if store is not None and traces is not None:
        # A batch processor: its delay is OTEL_BSP_SCHEDULE_DELAY's (the test sets it).
        store.tracing = RunTracing(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces)))
    registry = agents.registry(count_log, hang_gate=hang_gate, gate_log=gate_log,
                               announce=announce)
    chosen = options(task_queue)
    served = served_agents(agents.definitions(registry), registry, chosen)
    async with agent_worker(client, served, chosen, store=store):
        announce("ready")
        await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("task_queue")
    parser.add_argument("count_log", type=Path)
    parser.add_argument("gate_log", type=Path)
    parser.add_argument("--hang-gate", action="store_true")
    parser.add_argument("--store")
    parser.add_argument("--traces")
    arguments = parser.parse_args()
    asyncio.run(serve(arguments.address, arguments.task_queue, arguments.count_log,
                      arguments.gate_log, hang_gate=arguments.hang_gate,
                      store_url=arguments.store, traces=arguments.traces))
