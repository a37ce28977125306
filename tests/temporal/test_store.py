"""Temporal runs in the run store: the same run, thread and timeline as a local run."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from bloge import (
    AgentLoopOperator,
    LlmChatOperator,
    LlmStreamingChatOperator,
    MaxTurnsExceededError,
    OperatorRegistry,
)
from bloge.agent.materialize import agent_operator
from bloge.core.context import OperatorContext, Principal
from bloge.core.errors import RunError
from bloge.llm import FunctionProvider
from bloge.store import RunStatus, Store, StoreNotFoundError, open_store
from bloge.store.timeline import run_timeline
from bloge.temporal import (
    RunCancelledError,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    served_agents,
)
from tests.temporal import agents
from tests.temporal.conftest import StoredAgents


def _shape(events: list[Any]) -> list[tuple[str, Any]]:
    """What a timeline says, without times: each callback and its turn and tool."""
    return sorted((e.type, (e.body.get("turn_number"), e.body.get("tool_name"),
                            e.body.get("exit_reason"), e.body.get("success")))
                  for e in events if e.type.startswith("on_agent_"))


def _tools(events: list[Any]) -> list[tuple[str, Any]]:
    """A stream's tool events: tool_start, then tool_end with its success."""
    return [(e.type, e.body.get("success")) for e in events
            if e.type in ("tool_start", "tool_end")]


async def test_a_temporal_run_is_kept_like_a_local_one(client: Client, task_queue: str,
                                                        tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        local = AgentLoopOperator("counter", definitions["counter"], registry, store=store)
        here = await local.aexecute("hello", run_id="local-1")
        options = TemporalOptions(task_queue=task_queue)
        served = served_agents(definitions, registry, options)
        async with agent_worker(client, served, options, store=store):
            runner = TemporalRunner(client, task_queue)
            there = await runner.run("counter", "hello", run_id="wf-1")
            # A second run on the same thread sees the first one's messages.
            again = await runner.run("counter", "more", run_id="wf-2",
                                     thread_id=there.thread_id)
        assert there.content == here.content
        runs = {run.id: run for run in await store.list_runs()}
        assert runs["wf-1"].status is RunStatus.SUCCEEDED
        assert runs["wf-1"].agent_id == "counter"
        assert runs["wf-1"].turns == 2
        assert runs["wf-1"].usage == here.usage
        assert runs["wf-1"].output is not None
        assert runs["wf-1"].output["content"] == here.content
        assert _shape(await store.run_events("wf-1")) == _shape(
            await store.run_events("local-1"))
        timeline = run_timeline("wf-1", await store.run_events("wf-1"))
        assert len(timeline) == len(run_timeline("local-1", await store.run_events("local-1")))
        # The thread's log holds both runs' messages, each once; the second run started
        # from the first one's (so the model answered it at once).
        assert there.thread_id is not None
        log = await store.thread_messages(there.thread_id)
        first = ["user", "assistant", "tool", "tool", "assistant"]
        assert [m.message.role for m in log] == [*first, "user", "assistant"]
        assert [m.run_id for m in log] == ["wf-1"] * 5 + ["wf-2"] * 2
        assert [m.role for m in again.messages] == [*first, "user", "assistant"]
        assert runs["wf-2"].thread_id == there.thread_id
    finally:
        registry.get("Gate").release.set()
        await store.aclose()


async def test_cancelling_in_the_store_cancels_the_workflow(client: Client, task_queue: str,
                                                            tmp_path: Path) -> None:
    started = tmp_path / "gate.log"
    registry = agents.registry(tmp_path / "count.log", hang_gate=True, gate_log=started)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        options = TemporalOptions(task_queue=task_queue, heartbeat_timeout=1.0)
        served = served_agents(agents.definitions(registry), registry, options)
        async with agent_worker(client, served, options, store=store):
            runner = TemporalRunner(client, task_queue)
            handle = await runner.start("counter", "stop me", run_id="wf-cancel")
            assert await asyncio.to_thread(registry.get("Gate").entered.wait, 60)
            await store.cancel_run("wf-cancel")  # what bloge runs cancel and the server do
            with pytest.raises(RunCancelledError):
                await runner.result(handle.id)
        run = await store.get_run("wf-cancel")
        assert run.status is RunStatus.CANCELLED
        assert run.exit_reason == "cancelled"
    finally:
        registry.get("Gate").release.set()
        await store.aclose()


@pytest.mark.parametrize("agent_id", ["slow", "slowStream"])
async def test_a_timed_out_tool_call_is_kept_like_a_local_one(
        client: Client, task_queue: str, tmp_path: Path, agent_id: str) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        local = agent_operator(agent_id, definitions[agent_id], registry, store=store)
        ran = await local.aexecute("slow please", run_id="local-slow")
        here = ran[-1].final_output if isinstance(ran, list) else ran
        options = TemporalOptions(task_queue=task_queue)
        served = served_agents(definitions, registry, options)
        async with agent_worker(client, served, options, store=store):
            there = await TemporalRunner(client, task_queue).run(agent_id, "slow please",
                                                                 run_id="wf-slow")
        assert here is not None
        assert there.content == here.content == "told: Error: tool 'gate' timed out after 0.5 s"
        # The call's dispatch and its failed end, as in the local run: the activity was
        # stopped at its deadline, and the workflow told its end (a stream's tool_end too).
        events = await store.run_events("wf-slow")
        assert _shape(events) == _shape(await store.run_events("local-slow"))
        assert _tools(events) == _tools(await store.run_events("local-slow"))
        (completed,) = [e.body for e in events if e.type == "on_agent_tool_completed"]
        assert completed["success"] is False
        assert completed["result_summary"] == "Error: tool 'gate' timed out after 0.5 s"
    finally:
        registry.get("Gate").release.set()
        await store.aclose()


async def test_a_temporal_run_belongs_to_the_principal_it_was_started_for(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    acting_for: list[Principal | None] = []

    class Spied(agents.Count):
        def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
            acting_for.append(ctx.principal)
            return super().execute(input, ctx)

    registry = (OperatorRegistry.builder().register("Count", Spied(tmp_path / "count.log"))
                .register("Gate", agents.Gate(hang=False)).register("Hold", agents.Hold())
                .register("Step", agents.Step(None))
                .register("llmChat", LlmChatOperator(FunctionProvider(agents.model)))
                .register("llmStreamingChat",
                          LlmStreamingChatOperator(FunctionProvider(agents.model))).build())
    definitions = agents.definitions(registry)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        options = TemporalOptions(task_queue=task_queue)
        served = served_agents(definitions, registry, options)
        async with agent_worker(client, served, options, store=store):
            runner = TemporalRunner(client, task_queue)
            there = await runner.run("counter", "hello", run_id="wf-1", thread_id="t-1",
                                     principal=Principal("key:alice"))
            assert acting_for == [Principal("key:alice")]  # its tools act for Alice
            with pytest.raises(RunError, match="run 'wf-2' failed"):
                await runner.run("counter", "more", run_id="wf-2", thread_id="t-1",
                                 principal=Principal("key:bob"))
        assert [run.id for run in await store.list_runs()] == ["wf-1"]
        assert there.thread_id == "t-1"
        assert (await store.get_run("wf-1", owner="key:alice")).id == "wf-1"
        assert (await store.get_thread("t-1", owner="key:alice")).id == "t-1"
        with pytest.raises(StoreNotFoundError):
            await store.get_run("wf-1", owner="key:bob")
    finally:
        registry.get("Gate").release.set()
        await store.aclose()


async def test_a_run_out_of_turns_goes_on_from_its_checkpoint_as_the_same_run(
        worked: StoredAgents, store: Store) -> None:
    definition = worked.definitions["counter"]
    capped = AgentLoopOperator("counter", replace(definition, max_turns=1), worked.registry,
                               store=worked.runs())
    with pytest.raises(MaxTurnsExceededError):
        await capped.aexecute("hello", run_id="capped-1")
    assert (await store.get_run("capped-1")).status is RunStatus.FAILED
    output = await worked.operator("counter").aresume_run("capped-1")
    run = await store.get_run("capped-1")
    assert (run.status, run.turns, output.turns_used) == (RunStatus.SUCCEEDED, 2, 2)
    assert (output.run_id, output.thread_id) == ("capped-1", run.thread_id)
    # The thread's log holds the run's messages once each, as a run never stopped does.
    log = await store.thread_messages(run.thread_id)
    assert [m.message.role for m in log] == ["user", "assistant", "tool", "tool", "assistant"]
    assert {m.run_id for m in log} == {"capped-1"}
