"""A traced Temporal run is one trace, whichever workers run its activities: the caller's
span, the run's span, a span per model and tool call, none twice — also when a worker is
killed in the middle of a tool round and another finishes the run."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge.core import tracecontext
from bloge.store import open_store
from bloge.temporal import TemporalOptions, TemporalRunner, agent_worker, served_agents
from tests.server.live_server import LiveServer
from tests.temporal import agents
from tests.temporal.conftest import Spawn
from tests.temporal.worker_child import WORKFLOW_TASK_TIMEOUT
from tests.tracing.conftest import tracing_to
from tests.tracing.receiver import ReceivedSpan, Receiver

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
CALLER = tracecontext.TraceParent.parse(f"00-{CALLER_TRACE}-{CALLER_SPAN}-01")


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, LiveServer]]:
    received = Receiver()
    with LiveServer(received.app) as server:
        yield received, server


def one_trace_of_the_counter(spans: list[ReceivedSpan]) -> None:
    """The counter's run: its span under the caller's, two model calls and its two tool
    calls under it, each once, all in the caller's trace."""
    assert not [span_id for span_id, seen in Counter(s.span_id for s in spans).items()
                if seen > 1]
    assert {span.trace_id for span in spans} == {CALLER_TRACE}
    (run,) = [span for span in spans if span.name == "invoke_agent counter"]
    assert run.parent == CALLER_SPAN
    assert sorted(span.name for span in spans if span.parent == run.span_id) == [
        "chat test-model", "chat test-model", "execute_tool count", "execute_tool gate"]
    assert len(spans) == 5


async def test_a_traced_temporal_run_is_one_trace_under_its_caller(
        client: Client, task_queue: str, tmp_path: Path,
        receiver: tuple[Receiver, LiveServer]) -> None:
    received, server = receiver
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    store.tracing = tracing = tracing_to(server)
    try:
        async with agent_worker(client, served_agents(agents.definitions(registry), registry,
                                                      options), options, store=store):
            token = tracecontext.caller.set(CALLER)
            try:
                output = await TemporalRunner(client, task_queue).run("counter", "hello",
                                                                      run_id="traced-1")
            finally:
                tracecontext.caller.reset(token)
        assert tracing.flush()
    finally:
        tracing.shutdown()
        await store.aclose()
    assert output.content.startswith("answer: ")
    spans = received.wait_for(lambda spans: len(spans) >= 5)
    one_trace_of_the_counter(spans)
    (run,) = received.named("invoke_agent counter")
    assert run.attributes["bloge.run.id"] == "traced-1"
    assert run.attributes["bloge.exit_reason"] == "stop"


async def test_a_worker_killed_in_a_tool_round_leaves_one_trace_without_duplicates(
        client: Client, task_queue: str, tmp_path: Path,
        receiver: tuple[Receiver, LiveServer], spawn: Spawn) -> None:
    received, server = receiver
    store_url = f"sqlite:///{tmp_path / 'runs.db'}"
    schema = open_store(store_url)
    await schema.migrate()  # made before two workers race to make it
    await schema.aclose()
    args = ("--store", store_url, "--traces", server.url("/v1/traces"))
    # Spans leave a worker 50 ms after they end, not at its (killed) exit.
    sends_soon = {"OTEL_BSP_SCHEDULE_DELAY": "50"}
    first = spawn(*args, hang_gate=True, env=sends_soon)
    runner = TemporalRunner(client, task_queue, workflow_task_timeout=WORKFLOW_TASK_TIMEOUT)
    token = tracecontext.caller.set(CALLER)
    try:
        handle = await runner.start("counter", "crash", run_id="traced-crash")
    finally:
        tracecontext.caller.reset(token)
    # The first worker sent its model call's span and the completed count's; gate hangs.
    await asyncio.to_thread(received.wait_for, lambda spans: {
        "chat test-model", "execute_tool count"} <= {span.name for span in spans})
    spawn(*args, env=sends_soon)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    async with asyncio.timeout(120):
        output = await runner.result(handle.id)
    assert output.content == "answer: counted crash | opened crash"
    spans = await asyncio.to_thread(
        received.wait_for, lambda spans: any(s.name.startswith("invoke_agent")
                                             for s in spans))
    one_trace_of_the_counter(spans)
    (gate,) = received.named("execute_tool gate")
    assert gate.attributes["gen_ai.tool.call.id"] == "c2"
