"""The loop as a workflow, on a real dev server, with a worker in this process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge import AgentDef, AgentInput, MaxTurnsExceededError, OperatorRegistry
from bloge.core.errors import RunError
from bloge.temporal import (
    AgentWorkflow,
    RunCancelledError,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    catalogue,
    served_agents,
)
from bloge.temporal.activities import AgentActivities
from bloge.temporal.patches import BASELINE, LONG_RUNS, QUIET_ENDS
from bloge.temporal.worker import PASSED_THROUGH
from bloge.temporal.workflow import FINISH_ACTIVITY, WORKFLOW, start_payload
from tests.runtime.helpers import Recorder
from tests.temporal import agents

pytestmark = pytest.mark.usefixtures("temporal_server")

Serving = Callable[..., AbstractAsyncContextManager[Any]]


@pytest.fixture(params=[False, True], ids=["activities", "local-model-calls"])
def serving(client: Any, task_queue: str, tmp_path: Path,
            request: pytest.FixtureRequest) -> Serving:
    """``async with serving(listeners=[…]) as (runner, registry):`` a worker for the test
    agents on this test's task queue, and a runner starting runs there (each test runs
    twice: with its model calls activities, and local activities)."""
    local_model_calls: bool = request.param

    @asynccontextmanager
    async def serve(*, listeners: tuple[Any, ...] = (), registry: OperatorRegistry | None = None,
                    **overrides: Any) -> AsyncIterator[tuple[Any, OperatorRegistry]]:
        registry = registry or agents.registry(tmp_path / "count.log")
        options = TemporalOptions(task_queue=task_queue, **overrides)
        definitions: dict[str, AgentDef] = agents.definitions(registry)
        served = served_agents(definitions, registry, options, listeners=listeners)
        async with agent_worker(client, served, options):
            try:
                yield TemporalRunner(client, task_queue,
                                     local_model_calls=local_model_calls), registry
            finally:  # a gate left hanging would hold the worker's shutdown
                registry.get("Gate").release.set()

    return serve


async def test_a_run_is_a_workflow_whose_calls_are_activities(serving: Serving,
                                                              tmp_path: Path) -> None:
    recorder = Recorder()
    async with serving(listeners=(recorder,)) as (runner, _):
        output = await runner.run("counter", "hello", run_id="run-hello")
    assert output.content == "answer: counted hello | opened hello"
    assert output.run_id == "run-hello"
    assert output.turns_used == 2
    assert output.exit_reason == "stop"
    assert output.usage.llm_calls == 2
    assert output.usage.prompt_tokens == 12
    assert [m.role for m in output.messages] == ["user", "assistant", "tool", "tool",
                                                 "assistant"]
    assert output.checkpoint.turn_count == 2
    # Each callback once, from the activities, with the run's id.
    assert sorted(recorder.names()) == sorted([
        "turn_started", "llm_called", "tool_dispatched", "tool_dispatched", "tool_completed",
        "tool_completed", "turn_started", "llm_called", "loop_exited"])
    assert {context.execution_id for _, context, _ in recorder.events} == {"run-hello"}
    (exited,) = recorder.payloads("loop_exited")
    assert (exited.total_turns, exited.total_llm_calls, exited.exit_reason) == (2, 2, "stop")
    assert (tmp_path / "count.log").read_text().splitlines() == ["run-hello:1:c1"]
    # Model calls are activities, or markers of the workflow tasks that made them (the
    # tools and the end of the run are activities either way). No marker or search
    # attribute stands for the code's patches: the run's memo tells it
    # (bloge.temporal.patches).
    history = await runner.client.get_workflow_handle("run-hello").fetch_history()
    kinds = [event.event_type for event in history.events]
    local = runner.local_model_calls
    assert kinds.count(EventType.EVENT_TYPE_MARKER_RECORDED) == (2 if local else 0)
    assert EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES not in kinds
    assert kinds.count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) == (3 if local else 5)


async def test_a_run_with_no_one_to_tell_its_end_ends_without_the_finish_activity(
        serving: Serving, client: Client, task_queue: str, tmp_path: Path) -> None:
    async with serving() as (runner, _):
        output = await runner.run("counter", "hello", run_id="run-quiet")
        quiet = await runner.client.get_workflow_handle("run-quiet").fetch_history()
    # A run begun before the patch (its history has the finish activity) replays.
    told = await _run_before(client, task_queue, tmp_path, "run-told", {BASELINE, QUIET_ENDS},
                             local_model_calls=runner.local_model_calls)
    async with serving():
        await _replayed(told, client, task_queue, "counter")
    assert output.content == "answer: counted hello | opened hello"

    def activities(history: WorkflowHistory) -> list[str]:
        return [event.activity_task_scheduled_event_attributes.activity_type.name
                for event in history.events
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]

    assert activities(told)[-1] == FINISH_ACTIVITY
    assert activities(quiet) == activities(told)[:-1]


async def test_a_run_begun_before_the_baseline_patch_replays(client: Client, task_queue: str,
                                                             tmp_path: Path) -> None:
    """A worker that does not take the baseline patch runs as workers did before it (a
    marker for each earlier patch a run takes); its history replays today, and so do a
    run begun without the baseline's memo (the baseline's one marker) and today's (none)."""
    before = await _run_before(client, task_queue, tmp_path, "run-before", {BASELINE})
    unmarked = await _run_before(client, task_queue, tmp_path, "run-unmarked", set())
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    async with agent_worker(client, served_agents(agents.definitions(registry), registry,
                                                  options), options):
        await TemporalRunner(client, task_queue).run("counter", "hello", run_id="run-after")
        after = await client.get_workflow_handle("run-after").fetch_history()
        for history in (before, unmarked, after):
            await _replayed(history, client, task_queue, "counter")
    assert _patches(before) == [LONG_RUNS, QUIET_ENDS]
    assert _patches(unmarked) == [BASELINE]
    assert _patches(after) == []


async def _run_before(client: Client, task_queue: str, tmp_path: Path, run_id: str,
                      refused: set[str], *, local_model_calls: bool = False) -> WorkflowHistory:
    """The history of a ``counter`` run (no listeners) on a worker of today's code that
    does not take the ``refused`` patches: as a worker from before them ran it, begun
    without the baseline's memo, as a client from before it begins one."""
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    catalogue.file(task_queue, served)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    try:
        async with Worker(client, task_queue=task_queue, workflows=[AgentWorkflow],
                          activities=AgentActivities(served).all(),
                          workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
                          patch_activation_callback=lambda asked: asked.patch_id not in refused):
            await client.execute_workflow(
                WORKFLOW, start_payload("counter", input=AgentInput.of("hello"),
                                        local_model_calls=local_model_calls),
                id=run_id, task_queue=task_queue)
    finally:
        catalogue.withdraw(task_queue, list(served))
    return await client.get_workflow_handle(run_id).fetch_history()


def _patches(history: WorkflowHistory) -> list[str]:
    """The ids of the patch markers in ``history``, in order."""
    return [json.loads(event.marker_recorded_event_attributes.details["patch-data"]
                       .payloads[0].data)["id"]
            for event in history.events
            if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            and "patch-data" in event.marker_recorded_event_attributes.details]


def task_queue_of(history: WorkflowHistory) -> str:
    return str(history.events[0].workflow_execution_started_event_attributes.task_queue.name)


async def _replayed(history: WorkflowHistory, client: Any, task_queue: str,
                    agent_id: str) -> None:
    """Replay ``history`` with the agent this process serves on ``task_queue`` now; a
    nondeterminism error fails the test."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    replayer = Replayer(workflows=[AgentWorkflow], build_id="bloge-test",
                        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions))
    agent = catalogue.find(task_queue, agent_id)
    assert agent is not None
    catalogue.file("replay-bloge-test", {agent_id: agent})  # the replayer's task queue
    try:
        await replayer.replay_workflow(history)
    finally:
        catalogue.withdraw("replay-bloge-test", [agent_id])


async def test_max_turns_fails_the_workflow_with_the_checkpoint(serving: Serving) -> None:
    recorder = Recorder()
    async with serving(listeners=(recorder,)) as (runner, _):
        with pytest.raises(MaxTurnsExceededError) as caught:
            await runner.run("looper", "loop me", run_id="run-loop")
    error = caught.value
    assert error.max_turns == 2
    assert error.agent_id == "looper"
    assert error.run_id == "run-loop"
    assert error.checkpoint.turn_count == 2
    assert [m.role for m in error.checkpoint.conversation] == [
        "user", "assistant", "tool", "assistant", "tool"]
    (exited,) = recorder.payloads("loop_exited")
    assert exited.exit_reason == "max_turns"


async def test_a_max_turns_override_and_a_resume_from_the_checkpoint(serving: Serving) -> None:
    async with serving() as (runner, _):
        with pytest.raises(MaxTurnsExceededError) as caught:
            await runner.run("looper", "loop me", max_turns=1)
        assert caught.value.max_turns == 1
        with pytest.raises(MaxTurnsExceededError) as again:
            await runner.run("looper", checkpoint=caught.value.checkpoint, max_turns=2)
    assert again.value.checkpoint.turn_count == 2


async def test_a_tool_timeout_is_the_activity_timeout(serving: Serving) -> None:
    recorder = Recorder()
    async with serving(listeners=(recorder,)) as (runner, _):
        output = await runner.run("slow", "slow please")
    assert output.content == "told: Error: tool 'gate' timed out after 0.5 s"
    # The call's end is told, as a local run's dispatcher tells a timed-out call.
    assert recorder.names().count("tool_dispatched") == 1
    (completed,) = recorder.payloads("tool_completed")
    assert (completed.tool_name, completed.success) == ("gate", False)
    assert completed.result_summary == "Error: tool 'gate' timed out after 0.5 s"
    assert completed.latency_ms >= 500


async def test_a_call_its_stopping_worker_cut_short_has_an_unknown_outcome(
        serving: Serving, tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    hold = registry.get("Hold")
    recorder = Recorder()
    try:
        # The first worker stops (a deploy, say) while the call holds: after its grace (the
        # heartbeat timeout) it gives the call up, and the second worker goes on with the run.
        async with serving(registry=registry, heartbeat_timeout=1.0) as (runner, _):
            handle = await runner.start("held", "hold on", run_id="run-held")
            assert await asyncio.to_thread(hold.entered.wait, 60)
        async with serving(listeners=(recorder,), registry=registry) as (runner, _):
            output = await runner.result(handle.id)
    finally:
        hold.release.set()
    # Not "failed": the call may have taken effect, and it is not idempotent.
    assert output.content.startswith("told: Error: the outcome of tool 'hold' is unknown")
    (completed,) = recorder.payloads("tool_completed")
    assert completed.success is False


async def test_a_run_goes_on_when_a_failed_calls_end_cannot_be_told(
        serving: Serving, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker of an earlier release has no tool_failed activity: telling the timed-out
    # call's end fails, the run does not.
    served = AgentActivities.all
    monkeypatch.setattr(AgentActivities, "all", lambda self: [
        activity for activity in served(self) if activity != self.tool_failed])
    async with serving(tool_attempts=1) as (runner, _):
        output = await runner.run("slow", "slow please")
    assert output.content == "told: Error: tool 'gate' timed out after 0.5 s"


async def test_cancelling_the_workflow_cancels_the_run_and_its_activities(
        serving: Serving, tmp_path: Path, task_queue: str) -> None:
    started = tmp_path / "gate.log"
    registry = agents.registry(tmp_path / "count.log", hang_gate=True, gate_log=started)
    recorder = Recorder()
    async with serving(listeners=(recorder,), registry=registry,
                       heartbeat_timeout=1.0) as (runner, _):
        handle = await runner.start("counter", "stop me", run_id="run-cancel")
        assert await asyncio.to_thread(registry.get("Gate").entered.wait, 60)
        await runner.cancel("run-cancel")
        with pytest.raises(RunCancelledError):
            await runner.result(handle.id)
        description = await handle.describe()
    assert description.status is not None
    assert description.status.name == "CANCELED"
    (exited,) = recorder.payloads("loop_exited")
    assert exited.exit_reason == "cancelled"


async def test_cancelling_a_run_in_its_model_call(serving: Serving) -> None:
    recorder = Recorder()
    agents.STALLED.clear()
    async with serving(listeners=(recorder,), heartbeat_timeout=1.0) as (served, _):
        # A cancellation reaches a local model call when its worker next completes the
        # workflow task (at 80 % of the task timeout): a short one keeps this test short.
        runner = TemporalRunner(served.client, served.task_queue, workflow_task_timeout=2.0,
                                local_model_calls=served.local_model_calls)
        handle = await runner.start("counter", "stall", run_id="run-stall")
        assert await asyncio.to_thread(agents.STALLED.wait, 60)
        await runner.cancel("run-stall")
        with pytest.raises(RunCancelledError):
            await runner.result(handle.id)
    assert recorder.names().count("turn_started") == 1
    assert "llm_called" not in recorder.names()


async def test_an_unknown_agent_fails_at_once(serving: Serving) -> None:
    async with serving() as (runner, _):
        with pytest.raises(RunError, match="no agent 'nobody' on task queue"):
            await runner.run("nobody", "hi")


async def test_a_call_awaiting_approval_fails_an_unrecorded_run_plainly_on_temporal(
        serving: Serving) -> None:
    async with serving() as (runner, _):
        with pytest.raises(RunError, match="give the workers a run store") as caught:
            await runner.run("guarded", "hello", run_id="run-guarded")
    checkpoint = getattr(caught.value, "checkpoint", None)
    assert checkpoint is not None
    assert [m.role for m in checkpoint.conversation] == ["user"]
