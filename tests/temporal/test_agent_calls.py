"""Agents that call agents on Temporal: a sub-agent call's child run is a child workflow, and
a handoff goes on with the other agent's calls (see tests/temporal/agents.py's delegator,
researcher, triage and biller)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge.agent.runtime import child_run_id
from bloge.core.errors import RunError
from bloge.store import RunStatus, Store
from bloge.temporal import TemporalOptions, TemporalRunner, agent_worker, catalogue, served_agents
from bloge.temporal.worker import PASSED_THROUGH
from bloge.temporal.workflow import AgentWorkflow
from tests.processes import said_until
from tests.temporal import agents
from tests.temporal.conftest import Spawn, within

#: The task queue a Replayer of build id "bloge-test" runs its workflows on.
REPLAYED = "replay-bloge-test"


async def _replays(client: Client, run_id: str, task_queue: str) -> None:
    """The run's history replays on this code (a nondeterminism error fails the test)."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    replayer = Replayer(workflows=[AgentWorkflow], build_id="bloge-test",
                        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions))
    served = {agent_id: found for agent_id in catalogue.known(task_queue)
              if (found := catalogue.find(task_queue, agent_id)) is not None}
    catalogue.file(REPLAYED, served)
    try:
        await replayer.replay_workflow(history)
    finally:
        catalogue.withdraw(REPLAYED, list(served))


async def test_a_sub_agent_call_runs_its_child_as_a_child_workflow(
        client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options, store=store):
        output = await TemporalRunner(client, task_queue).run("delegator", "delegate pay",
                                                              run_id="parent-1")
        await _replays(client, "parent-1", task_queue)
    assert output.content == "delegated: found: counted research pay | opened delegate pay"
    child = child_run_id("parent-1:1:r1")
    assert child is not None
    # The parent's history started the child as a child workflow, and saw it end.
    history = await client.get_workflow_handle("parent-1").fetch_history()
    started = [event.start_child_workflow_execution_initiated_event_attributes
               for event in history.events if event.event_type
               == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]
    assert [attributes.workflow_id for attributes in started] == [child]
    assert any(event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
               for event in history.events)
    # Both runs are recorded, the child's with its parent.
    run = await store.get_run(child)
    assert (run.agent_id, run.parent_run_id, run.status) == (
        "researcher", "parent-1", RunStatus.SUCCEEDED)
    assert run.thread_id != (await store.get_run("parent-1")).thread_id
    assert [r.id for r in await store.child_runs("parent-1")] == [child]
    # The parent's record tells the call's end as a tool activity's would.
    ends = [(e.body.get("tool_name"), e.body.get("success"))
            for e in await store.run_events("parent-1") if e.type == "on_agent_tool_completed"]
    assert sorted(ends) == [("gate", True), ("research", True)]
    assert (tmp_path / "count.log").read_text().count("\n") == 1


async def test_a_child_that_fails_is_the_calls_error(client: Client, task_queue: str,
                                                     tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options):
        output = await TemporalRunner(client, task_queue).run("delegator", "delegate loop",
                                                              run_id="parent-2")
    child = child_run_id("parent-2:1:r1")
    assert output.content.startswith(
        f"delegated: Error: tool 'research' failed: SubAgentError: sub-agent 'researcher' "
        f"(run {child}) failed: ")
    assert "needed another model call after max_turns=2 turns" in output.content
    assert output.content.endswith(" | opened delegate loop")  # the parent went on


async def test_a_killed_worker_resumes_without_running_a_finished_child_again(
        client: Client, task_queue: str, tmp_path: Path, spawn: Spawn) -> None:
    count_log = tmp_path / "count.log"
    first = spawn(hang_gate=True)
    runner = TemporalRunner(client, task_queue)
    handle = await runner.start("delegator", "delegate twice", run_id="parent-3")
    # The child counted and answered; the parent's next call (gate) holds: kill it there.
    await asyncio.to_thread(said_until, first, lambda said: any(
        line.startswith("gate") for line in said), "a gate")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    spawn()
    output = await within(runner.result(handle.id), f"the end of run {handle.id}")
    assert output.content == ("delegated: found: counted research twice | "
                              "opened delegate twice")
    # The child's tool ran once: the child was not run again.
    assert count_log.read_text().splitlines() == [
        f"{child_run_id('parent-3:1:r1')}:1:n0"]


async def test_a_handoff_goes_on_with_the_other_agent(client: Client, task_queue: str,
                                                      tmp_path: Path, store: Store) -> None:
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options, store=store):
        output = await TemporalRunner(client, task_queue).run("triage", "bill me",
                                                              run_id="handed-1")
        await _replays(client, "handed-1", task_queue)
    # The model was offered biller's tools once the run handed over.
    assert output.content == "billed: counted count"
    assert output.checkpoint.agent_id == "biller"
    run = await store.get_run("handed-1")
    assert (run.agent_id, run.agent, run.status) == ("triage", "biller", RunStatus.SUCCEEDED)
    handoffs = [e.body for e in await store.run_events("handed-1")
                if e.type == "on_agent_handoff"]
    assert [(h["from_agent"], h["to_agent"], h["handoff"]) for h in handoffs] == [
        ("triage", "biller", "billing")]


async def test_a_handoff_to_an_agent_the_queue_does_not_serve_fails_the_run(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    definitions = agents.definitions(registry)
    served = served_agents({"triage": definitions["triage"]}, registry, options)
    async with agent_worker(client, served, options):
        with pytest.raises(RunError, match=r"hands over to agent 'biller', which task queue "
                                           rf"'{task_queue}' does not serve"):
            await TemporalRunner(client, task_queue).run("triage", "bill me")


async def test_a_child_spends_its_callers_budget_and_the_caller_names_it_when_stopped(
        client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    # thrifty may make two model calls in all: its first leaves its child one, the child's
    # second is refused, and thrifty's own second, the child's spend counted, is too.
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    child = child_run_id("thrift-1:1:r1")
    async with agent_worker(client, served, options, store=store):
        with pytest.raises(RunError) as caught:
            await TemporalRunner(client, task_queue).run("thrifty", "delegate pay",
                                                         run_id="thrift-1")
        await _replays(client, "thrift-1", task_queue)
    # The child was refused by its caller's budget, as a local child is.
    stopped = await store.get_run(child)
    assert stopped.status is RunStatus.FAILED
    assert stopped.error is not None
    assert stopped.error.type == "BudgetExceededError"
    assert "the calling agent's run's model_calls budget of 2 would be exceeded (used 2" in (
        stopped.error.message)
    # The caller counted the child's model call as its own, and says who spent it.
    assert f"its sub-agents spent 1 in researcher (run {child})" in str(caught.value)
    assert "the run's model_calls budget of 2 would be exceeded (used 2" in str(caught.value)
    assert (await store.get_run("thrift-1")).error is not None


async def test_a_child_that_answers_counts_its_spend_as_its_callers(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    # frugal may make three model calls in all: its child answers with two, and frugal's
    # own second is refused.
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options):
        with pytest.raises(RunError, match=r"its sub-agents spent 2 in researcher \(run "):
            await TemporalRunner(client, task_queue).run("frugal", "delegate pay",
                                                         run_id="frugal-1")
    assert (tmp_path / "count.log").read_text().count("\n") == 1  # the child's call ran


async def test_a_childs_tool_calls_past_the_trees_ceiling_do_not_run(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    # digger's tool lets bounded's sub-agents make one tool call: of digger's two counts,
    # the second is answered with an error instead of running.
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options):
        output = await TemporalRunner(client, task_queue).run("bounded", "delegate both",
                                                              run_id="bounded-1")
        await _replays(client, child_run_id("bounded-1:1:r1") or "", task_queue)
    assert output.content == (
        "delegated: found: counted research both | Error: tool 'count' was not run: the "
        "sub-agents of this run made 1 tool calls, their ceiling (max_descendant_tool_calls); "
        "answer with what you have | opened delegate both")
    assert (tmp_path / "count.log").read_text().count("\n") == 1
