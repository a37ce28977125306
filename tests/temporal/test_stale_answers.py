"""A stale answer on Temporal: a resumer that read a paused round's decisions in the store
before that round went on sends them again, and its signal reaches the run once it waits on
a later round whose call took the same id (``rekeeper``'s ``c1`` of turn 1, then of turn 2).
That round drops it (``STALE_ANSWERS``) and waits for its own; a history made by a worker
from before the patch, whose round took it, replays."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import pytest
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge import RunPaused
from bloge.agent import Decision
from bloge.core.context import OperatorContext, Principal
from bloge.store import Store
from bloge.temporal import TemporalOptions, TemporalRunner, catalogue, served_agents
from bloge.temporal.activities import AgentActivities
from bloge.temporal.patches import STALE_ANSWERS
from bloge.temporal.recording import StoreRecording
from bloge.temporal.worker import PASSED_THROUGH
from bloge.temporal.workflow import AgentWorkflow
from tests.temporal.conftest import StoredAgents
from tests.temporal.test_resume_limits import _patches
from tests.temporal.test_workflow import _replayed

pytestmark = pytest.mark.usefixtures("temporal_server")

ALICE = OperatorContext.root(principal=Principal("alice"))


async def _paused_in_turn_2(agents: StoredAgents, run_id: str) -> TemporalRunner:
    """``rekeeper``'s run ``run_id``, its turn 1's ``c1`` approved, paused on turn 2's
    ``c1``; then sent turn 1's approval again, as a second resumer sends it: the runner."""
    rekeeper = agents.operator("rekeeper")
    with pytest.raises(RunPaused) as first:
        await rekeeper.aexecute("again x", ALICE, run_id=run_id)
    assert [call.call_id for call in first.value.pending] == ["c1"]
    with pytest.raises(RunPaused) as second:
        await rekeeper.aresume_run(run_id, ALICE, decisions={"c1": True})
    assert [call.call_id for call in second.value.pending] == ["c1"]
    assert (await agents.store.get_run(run_id)).turns == 2
    runner = TemporalRunner(agents.client, agents.task_queue, store=agents.store)
    await runner.answer(run_id, {"c1": Decision(approved=True, principal="alice")}, turn=1)
    return runner


async def test_a_stale_answer_of_an_earlier_turn_does_not_settle_a_later_pause(
        worked: StoredAgents, store: Store) -> None:
    await _paused_in_turn_2(worked, "run-stale")
    output = await worked.operator("rekeeper").aresume_run("run-stale", ALICE,
                                                           decisions={"c1": False})
    assert output.content.startswith("answer: opened again x 0 | ")
    assert "opened again x 1" not in output.content
    assert "denied" in output.content
    history = await worked.client.get_workflow_handle("run-stale").fetch_history()
    await _replayed(history, worked.client, worked.task_queue, "rekeeper")
    assert STALE_ANSWERS in _patches(history)


async def test_a_history_whose_round_took_a_stale_answer_replays(
        stored_agents: StoredAgents) -> None:
    async with _worker_before(stored_agents, STALE_ANSWERS):
        await _paused_in_turn_2(stored_agents, "run-took")
        handle = stored_agents.client.get_workflow_handle("run-took")
        output = await handle.result()  # it went on by itself, as workers before the patch
        history = await handle.fetch_history()
        await _replayed(history, stored_agents.client, stored_agents.task_queue, "rekeeper")
    assert output["content"] == "answer: opened again x 0 | opened again x 1"
    assert STALE_ANSWERS not in _patches(history)


@asynccontextmanager
async def _worker_before(agents: StoredAgents, patch_id: str) -> AsyncIterator[None]:
    """A worker of today's code with the store that does not take ``patch_id``, as a worker
    from before it ran."""
    options = TemporalOptions(task_queue=agents.task_queue)
    served = {agent_id: replace(agent, recorded=True) for agent_id, agent
              in served_agents(agents.definitions, agents.registry, options).items()}
    catalogue.file(agents.task_queue, served)
    recording = StoreRecording(agents.store, worker=f"temporal:{agents.task_queue}")
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    try:
        async with Worker(agents.client, task_queue=agents.task_queue,
                          workflows=[AgentWorkflow],
                          activities=AgentActivities(served, recording=recording,
                                                     client=agents.client).all(),
                          workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
                          patch_activation_callback=(
                              lambda asked: asked.patch_id != patch_id)):
            yield
    finally:
        catalogue.withdraw(agents.task_queue, list(served))
