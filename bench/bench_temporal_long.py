"""Long runs on Temporal (issue 27, item 33): a 500-turn run, and a run on a thread of 4 MB.

Workload: a zero-latency model that asks for one tool call a turn until turn ``--turns``,
then answers; a trivial tool; full memory (every model call is shown the whole run so far).
The run goes once without a store (its view travels by value) and once with a SQLite store
(its view goes by reference to the thread). Then four local runs leave a thread of 4 MB and a
Temporal run reads it. For each it reports the wall time, how many workflow histories the run
took (it continues as new) with their events, the largest payload in them, and the largest
activity input. On a bloge before continue-as-new the 4 MB thread fails: its history crosses
Temporal's 2 MiB payload limit.

    .venv/bin/python bench/bench_temporal_long.py [--turns 500] [--continue-as-new-events 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import Store, open_store
from bloge.temporal import TemporalOptions, TemporalRunner, agent_worker, served_agents

AGENTS = """
agent marathon {
  model = "bench"
  max_turns = 100000
  tool step : Step { input { n = tool_args.n } }
}

agent reader {
  model = "bench"
  max_turns = 2
}
"""
DEV_SERVER_FLAGS = ("--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000")
MEGABYTE = 1024 * 1024


def model(request: LlmRequest) -> LlmResponse:
    last = next(m.content for m in reversed(request.messages) if m.role == "user")
    if last.startswith("read"):
        return LlmResponse(f"read {sum(len(m.content) for m in request.messages)} bytes")
    done = sum(1 for m in request.messages if m.role == "tool")
    if done + 1 >= int(last.split()[1]):
        return LlmResponse(f"ran {done} steps")
    return LlmResponse("", "tool_calls", tool_calls=(
        ToolCall(f"s{done + 1}", "step", json.dumps({"n": str(done + 1)})),))


class Step:
    def execute(self, input: dict[str, Any], ctx: Any) -> str:
        return f"step {input['n']}"


def registry() -> OperatorRegistry:
    return (OperatorRegistry.builder().register("Step", Step())
            .register("llmChat", LlmChatOperator(FunctionProvider(model))).build())


async def histories(client: Client, handle: WorkflowHandle[Any, Any]) -> list[WorkflowHistory]:
    run_id = handle.first_execution_run_id or handle.run_id
    found: list[WorkflowHistory] = []
    while run_id:
        history = await client.get_workflow_handle(handle.id, run_id=run_id).fetch_history()
        found.append(history)
        last = history.events[-1]
        run_id = None
        if last.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
            run_id = last.workflow_execution_continued_as_new_event_attributes \
                .new_execution_run_id
    return found


def largest(found: list[WorkflowHistory]) -> tuple[int, int]:
    """The largest payload of any kind, and the largest activity input."""
    anything = inputs = 0
    for history in found:
        for event in history.events:
            for name in ("activity_task_scheduled_event_attributes",
                         "activity_task_completed_event_attributes",
                         "workflow_execution_started_event_attributes",
                         "workflow_execution_continued_as_new_event_attributes",
                         "workflow_execution_completed_event_attributes"):
                if not event.HasField(name):
                    continue
                kind = "result" if "completed" in name else "input"
                for payload in getattr(getattr(event, name), kind).payloads:
                    anything = max(anything, len(payload.data))
                    if name.startswith("activity_task_scheduled"):
                        inputs = max(inputs, len(payload.data))
    return anything, inputs


async def one(client: Client, agent: str, text: str, *, store: Store | None,
              options: dict[str, Any], thread_id: str | None = None) -> str:
    queue = uuid.uuid4().hex
    chosen = TemporalOptions(task_queue=queue, activity_timeout=30.0, tool_attempts=1,
                             **options)
    operators = registry()
    definitions = {d.id: d for d in AgentDslCompiler(operators).compile_all(AGENTS)}
    async with agent_worker(client, served_agents(definitions, operators, chosen), chosen,
                            store=store):
        runner = TemporalRunner(client, queue)
        began = time.perf_counter()
        handle = await runner.start(agent, text, thread_id=thread_id)
        try:
            answer = (await runner.result(handle.id)).content
        except Exception as error:  # noqa: BLE001 -- the bench reports how a run failed
            answer = f"failed: {str(error)[:160]}"
        wall = time.perf_counter() - began
        found = await histories(client, handle)
    anything, inputs = largest(found)
    return (f"{wall:6.1f} s  {answer!r}; {len(found)} histories "
            f"({', '.join(str(len(h.events)) for h in found)} events); largest payload "
            f"{anything:,} B, largest activity input {inputs:,} B")


async def main(turns: int, events: int | None) -> None:
    options: dict[str, Any] = {} if events is None else {"continue_as_new_events": events}
    folder = Path(tempfile.mkdtemp())
    binary = Path(sys.executable).parent / "temporal"
    async with await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(binary), ip="127.0.0.1", ui=False,
            dev_server_extra_args=list(DEV_SERVER_FLAGS)) as env:
        client = env.client
        text = f"marathon {turns}"
        print(f"{turns} turns, no store:  ", await one(client, "marathon", text, store=None,
                                                       options=options), flush=True)
        async with open_store(f"sqlite:///{folder / 'a.db'}") as store:
            print(f"{turns} turns, SQLite:    ", await one(client, "marathon", text,
                                                           store=store, options=options),
                  flush=True)
        async with open_store(f"sqlite:///{folder / 'b.db'}") as store:
            operators = registry()
            definition = AgentDslCompiler(operators).compile_all(AGENTS)[1]
            local = AgentLoopOperator("reader", definition, operators, store=store)
            thread = None
            for letter in "abcd":
                thread = (await local.aexecute("read " + letter * MEGABYTE,
                                               thread_id=thread)).thread_id
            print("4 MB thread, SQLite:   ", await one(client, "reader", "read it all",
                                                       store=store, options=options,
                                                       thread_id=thread), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--continue-as-new-events", type=int, default=None)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.continue_as_new_events))
