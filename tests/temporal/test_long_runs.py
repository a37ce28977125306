"""Long runs on Temporal: a run continues as new before its history reaches Temporal's limits
(and stays one run: its output, its listeners, its record in the store, a cancel, a resume
from its checkpoint), and no payload it hands Temporal passes ``max-payload-bytes`` (with a
store, a thread of several MB goes by reference; without, the run fails naming itself)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge import AgentLoopOperator, MaxTurnsExceededError, OperatorRegistry
from bloge.agent.loop.errors import AgentRunError
from bloge.core.errors import BlogeUsageError, RunError
from bloge.llm import LlmMessage
from bloge.store import RunStatus, Store, open_store
from bloge.temporal import (
    AgentWorkflow,
    RunCancelledError,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    catalogue,
    served_agents,
)
from bloge.temporal.worker import PASSED_THROUGH
from tests.runtime.helpers import Recorder
from tests.temporal import agents
from tests.temporal.conftest import StoredAgents, within

pytestmark = pytest.mark.usefixtures("temporal_server")

#: Low enough that a 500-turn run (about ten events a turn) continues as new several times.
EVENTS = 1000
MEGABYTE = 1024 * 1024
REPLAYED = "bloge-test"


@asynccontextmanager
async def _serving(client: Client, task_queue: str, registry: OperatorRegistry, *,
                   store: Store | None = None, listeners: tuple[Any, ...] = (),
                   local_model_calls: bool = False,
                   **overrides: Any) -> AsyncIterator[TemporalRunner]:
    options = TemporalOptions(task_queue=task_queue, **overrides)
    served = served_agents(agents.definitions(registry), registry, options,
                           listeners=listeners)
    async with agent_worker(client, served, options, store=store):
        try:
            yield TemporalRunner(client, task_queue, store=store,
                                 max_payload_bytes=options.max_payload_bytes,
                                 local_model_calls=local_model_calls)
        finally:
            registry.get("Step").release.set()


async def _replayed(histories: list[WorkflowHistory], task_queue: str, agent_id: str) -> None:
    """Replay ``histories`` with the agent this process serves on ``task_queue``; a
    nondeterminism error fails the test."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    replayer = Replayer(workflows=[AgentWorkflow], build_id=REPLAYED,
                        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions))
    agent = catalogue.find(task_queue, agent_id)
    assert agent is not None
    catalogue.file(f"replay-{REPLAYED}", {agent_id: agent})  # the replayer's task queue
    try:
        for history in histories:
            await replayer.replay_workflow(history)
    finally:
        catalogue.withdraw(f"replay-{REPLAYED}", [agent_id])


async def _histories(client: Client,
                     handle: WorkflowHandle[Any, Any]) -> list[WorkflowHistory]:
    """The histories of a workflow, first to last (each but the last continued as new)."""
    run_id = handle.first_execution_run_id or handle.run_id
    found: list[WorkflowHistory] = []
    while run_id:
        history = (await client.get_workflow_handle(handle.id, run_id=run_id)
                   .fetch_history())
        found.append(history)
        last = history.events[-1]
        run_id = None
        if last.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
            run_id = last.workflow_execution_continued_as_new_event_attributes \
                .new_execution_run_id
    return found


def _largest_payload(histories: list[WorkflowHistory]) -> int:
    """The largest payload in ``histories``: an activity's input or result, a local
    activity's marker, the workflow's input, what it continued with, its result."""
    largest = 0
    for history in histories:
        for event in history.events:
            for name in ("activity_task_scheduled_event_attributes",
                         "activity_task_completed_event_attributes",
                         "workflow_execution_started_event_attributes",
                         "workflow_execution_continued_as_new_event_attributes",
                         "workflow_execution_completed_event_attributes"):
                if event.HasField(name):
                    attributes = getattr(event, name)
                    field = "result" if "completed" in name else "input"
                    for payload in getattr(attributes, field).payloads:
                        largest = max(largest, len(payload.data))
            if event.HasField("marker_recorded_event_attributes"):
                for payloads in event.marker_recorded_event_attributes.details.values():
                    for payload in payloads.payloads:
                        largest = max(largest, len(payload.data))
    return largest


@pytest.mark.parametrize("kept", [False, True], ids=["by-value", "in-store"])
async def test_a_500_turn_run_continues_as_new_and_stays_one_run(
        client: Client, task_queue: str, tmp_path: Path, kept: bool) -> None:
    registry = agents.registry(tmp_path / "count.log")
    recorder = Recorder()
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}") if kept else None
    try:
        async with _serving(client, task_queue, registry, store=store, listeners=(recorder,),
                            continue_as_new_events=EVENTS) as runner:
            handle = await runner.start("marathon", "marathon 500", run_id="marathon")
            output = await runner.result(handle.id)
            histories = await _histories(client, handle)
            # Each history replays as it ran (a worker that took the run over would).
            await _replayed(histories, task_queue, "marathon")
        # Continued as new several times, each history well short of Temporal's limits.
        assert len(histories) >= 4
        assert all(len(history.events) < EVENTS + 100 for history in histories)
        # One run all the same: its output, its listeners' events, its record.
        assert output.content == "ran 499 steps"
        assert output.run_id == "marathon"
        assert output.turns_used == output.checkpoint.turn_count == 500
        assert (output.usage.llm_calls, output.usage.prompt_tokens) == (500, 1000)
        assert output.checkpoint.usage == output.usage
        assert len(output.messages) == len(output.checkpoint.conversation) == 1000
        assert [m.content for m in output.messages[:3]] == ["marathon 500", "", "step 1"]
        assert [m.content for m in output.messages[-2:]] == ["step 499", "ran 499 steps"]
        assert [m.tool_call_id for m in output.messages if m.role == "tool"] == [
            f"s{n}" for n in range(1, 500)]
        assert recorder.names().count("turn_started") == 500
        assert recorder.names().count("tool_completed") == 499
        (exited,) = recorder.payloads("loop_exited")
        assert (exited.total_turns, exited.total_llm_calls, exited.exit_reason) == (
            500, 500, "stop")
        if store is None:
            return
        (run,) = await store.list_runs()
        assert (run.id, run.status, run.turns) == ("marathon", RunStatus.SUCCEEDED, 500)
        assert run.usage == output.usage
        events = await store.run_events("marathon")
        kinds = [event.type for event in events]
        assert kinds.count("on_agent_turn_started") == 500
        assert kinds.count("on_agent_loop_exited") == kinds.count("done") == 1
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
        # The thread's log holds each message of the run once, in order.
        assert output.thread_id is not None
        log = await store.thread_messages(output.thread_id)
        assert [m.seq for m in log] == list(range(1, 1001))
        assert [m.message for m in log] == list(output.messages)
        assert {m.run_id for m in log} == {"marathon"}
    finally:
        if store is not None:
            await store.aclose()


async def test_cancelling_a_run_that_continued_as_new(client: Client, task_queue: str,
                                                      tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log", hold_step=120)
    step = registry.get("Step")
    recorder = Recorder()
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        async with _serving(client, task_queue, registry, store=store, listeners=(recorder,),
                            continue_as_new_events=300, heartbeat_timeout=1.0) as runner:
            handle = await runner.start("marathon", "marathon 500", run_id="stopped")
            assert await asyncio.to_thread(step.entered.wait, 120)
            assert len(await _histories(client, handle)) >= 2
            await store.cancel_run("stopped")  # what bloge runs cancel and the server do
            with pytest.raises(RunCancelledError):
                await runner.result(handle.id)
        run = await store.get_run("stopped")
        assert (run.status, run.exit_reason, run.turns) == (RunStatus.CANCELLED, "cancelled",
                                                             120)
        assert run.usage.llm_calls == 120
        (exited,) = recorder.payloads("loop_exited")
        assert (exited.exit_reason, exited.total_turns) == ("cancelled", 120)
        # The messages of the run so far are in the thread's log, each once, up to the call
        # the cancel cut short (as a local run's log has it).
        log = await store.thread_messages(run.thread_id)
        assert [m.seq for m in log] == list(range(1, len(log) + 1)) == list(range(1, 241))
        assert log[-2].message.content == "step 119"
        assert [call.id for call in log[-1].message.tool_calls] == ["s120"]
    finally:
        step.release.set()
        await store.aclose()


@pytest.mark.parametrize("local", [False, True], ids=["activities", "local-model-calls"])
async def test_a_run_out_of_turns_after_continuing_as_new_resumes_from_its_checkpoint(
        client: Client, task_queue: str, tmp_path: Path, local: bool) -> None:
    registry = agents.registry(tmp_path / "count.log")
    async with _serving(client, task_queue, registry, continue_as_new_events=150,
                        local_model_calls=local) as runner:
        handle = await runner.start("marathon", "marathon 500", max_turns=40)
        with pytest.raises(MaxTurnsExceededError) as caught:
            await runner.result(handle.id)
        assert len(await _histories(client, handle)) >= 2
        checkpoint = caught.value.checkpoint
        assert (checkpoint.turn_count, checkpoint.usage.llm_calls) == (40, 40)
        assert len(checkpoint.conversation) == 1 + 2 * 40
        assert checkpoint.conversation[-1].content == "step 40"
        with pytest.raises(MaxTurnsExceededError) as again:
            await runner.run("marathon", checkpoint=checkpoint, max_turns=60)
    resumed = again.value.checkpoint
    assert (resumed.turn_count, resumed.usage.llm_calls) == (60, 60)
    assert resumed.conversation[-1].content == "step 60"


async def test_a_thread_of_several_megabytes_goes_by_reference(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        # Four local runs leave a thread of about 4 MB.
        local = AgentLoopOperator("reader", definitions["reader"], registry, store=store)
        first = await local.aexecute("read " + "a" * MEGABYTE)
        thread = first.thread_id
        for letter in "bcd":
            await local.aexecute("read " + letter * MEGABYTE, thread_id=thread)
        # A short activity timeout: a payload Temporal refuses fails the run soon.
        async with _serving(client, task_queue, registry, store=store,
                            activity_timeout=20.0) as runner:
            handle = await runner.start("reader", "read it all", thread_id=thread,
                                        run_id="big")
            output = await runner.result(handle.id)
            histories = await _histories(client, handle)
        log = await store.thread_messages(str(thread))
        shown = sum(len(m.message.content) for m in log[:-1])
        assert shown > 4 * MEGABYTE
        assert output.content == f"read {shown} bytes in {len(log) - 1} messages"
        assert (await store.get_run("big")).status is RunStatus.SUCCEEDED
        assert [m.run_id for m in log[-2:]] == ["big", "big"]
        # Its messages come back from the store: too many to cross Temporal.
        assert list(output.messages) == [m.message for m in log]
        # No payload near Temporal's limit: the view went by reference, read in pages.
        assert _largest_payload(histories) <= TemporalOptions().max_payload_bytes
    finally:
        await store.aclose()


async def test_a_thread_message_over_the_limit_fails_the_run_naming_it(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        local = AgentLoopOperator("reader", definitions["reader"], registry, store=store)
        thread = (await local.aexecute("read " + "a" * (3 * MEGABYTE))).thread_id
        async with _serving(client, task_queue, registry, store=store,
                            activity_timeout=20.0) as runner:
            with pytest.raises(RunError) as caught:
                await runner.run("reader", "read it all", thread_id=thread, run_id="huge")
        assert str(caught.value).startswith(
            f"run 'huge' failed: PayloadTooLarge: run 'huge': message 1 of thread {thread!r} "
            "is over the 2,000,000 bytes of bloge.temporal.max-payload-bytes")
        # The run's record ends with it, and the thread is free for the next run.
        run = await store.get_run("huge")
        assert (run.status, run.exit_reason) == (RunStatus.FAILED, "error")
        assert run.error is not None
        assert (run.error.type, "message 1" in run.error.message) == ("PayloadTooLarge", True)
        assert (await store.get_thread(str(thread))).active_run_id is None
    finally:
        await store.aclose()


async def test_a_run_taken_up_past_the_payload_limit_keeps_its_turns_and_usage(
        worked: StoredAgents, store: Store) -> None:
    looper = worked.definitions["looper"]
    local = AgentLoopOperator("looper", looper, worked.registry, store=store)
    with pytest.raises(MaxTurnsExceededError):  # its 2 turns, on a message of 3 MB
        await local.aexecute("loop " + "a" * (3 * MEGABYTE), run_id="taken-up")
    before = await store.get_run("taken-up")
    assert (before.turns, before.usage.llm_calls) == (2, 2)
    raised = AgentLoopOperator("looper", replace(looper, max_turns=4), worked.registry,
                               store=worked.runs())
    with pytest.raises(RunError, match="PayloadTooLarge: run 'taken-up': message 1 of thread"):
        await within(raised.aresume_run("taken-up"), "the refused take-up")
    run = await store.get_run("taken-up")
    assert (run.status, run.exit_reason) == (RunStatus.FAILED, "error")
    assert (run.turns, run.usage) == (2, before.usage)


async def test_without_a_store_a_run_past_the_payload_limit_fails_naming_itself(
        client: Client, task_queue: str, tmp_path: Path) -> None:
    registry = agents.registry(tmp_path / "count.log")
    limit = 32 * 1024
    async with _serving(client, task_queue, registry, max_payload_bytes=limit) as runner:
        # Its view grows a turn at a time, past the limit.
        with pytest.raises(AgentRunError) as caught:
            await runner.run("marathon", "marathon 500", run_id="grows")
        message = str(caught.value)
        assert "run 'grows'" in message
        assert "bloge.temporal.max-payload-bytes" in message
        assert "bloge.store" in message
        turn = caught.value.checkpoint.turn_count
        assert 0 < turn < 500
        # A start that would pass it is refused before it reaches Temporal.
        with pytest.raises(BlogeUsageError, match=r"run 'huge'.*max-payload-bytes"):
            await runner.start("reader", "read", run_id="huge",
                               history=[LlmMessage.user("x" * limit)])
