"""A run that ended (cancelled in the middle of a tool round, or stopped by its budget) and
is resumed by its id goes on for as many turns on Temporal as in process: the same agent,
model and tools, resumed through an operator (``aresume_run``) from the run store.
``counter`` asks for ``count`` and ``gate`` in turn 1 and answers in turn 2."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge import AgentLoopOperator, AgentOutput, AgentRunError, OperatorRegistry, RunPaused
from bloge.agent import with_budget_limits
from bloge.store import Store, decide_call
from bloge.temporal import (
    Connection,
    RunCancelledError,
    TemporalOptions,
    TemporalRunStore,
    agent_worker,
    served_agents,
)
from bloge.temporal.patches import ROUND_CHECKPOINTS
from tests.temporal import agents
from tests.temporal.conftest import DevServer
from tests.temporal.test_workflow import _patches as patches_of
from tests.temporal.test_workflow import _replayed as replayed

pytestmark = pytest.mark.usefixtures("temporal_server")

#: The bound on waiting for a run to reach its gate (a failing test, not a slow one).
WAIT_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Both:
    """``counter`` in process (``here``) and on a worker of the test's task queue
    (``there``), both recorded in ``store``; each with its own tools (``hang_gate``: their
    gates hold until released)."""

    here: OperatorRegistry
    there: OperatorRegistry
    store: Store
    runs: TemporalRunStore

    def local(self, **budget: int) -> AgentLoopOperator:
        return _counter(self.here, self.store, budget)

    def temporal(self, **budget: int) -> AgentLoopOperator:
        return _counter(self.there, self.runs, budget)


def _counter(registry: OperatorRegistry, store: object,
             budget: dict[str, int]) -> AgentLoopOperator:
    definition = with_budget_limits(agents.definitions(registry)["counter"], budget)
    return AgentLoopOperator("counter", replace(definition, max_turns=5), registry,
                             store=store)


async def _both(client: Client, task_queue: str, address: str, store: Store,
                tmp_path: Path, *, hang_gate: bool) -> AsyncIterator[Both]:
    here = agents.registry(tmp_path / "here.log", hang_gate=hang_gate)
    there = agents.registry(tmp_path / "there.log", hang_gate=hang_gate)
    options = TemporalOptions(task_queue=task_queue, heartbeat_timeout=1.0)
    served = served_agents(agents.definitions(there), there, options)
    try:
        async with agent_worker(client, served, options, store=store):
            yield Both(here, there, store,
                       TemporalRunStore(store, Connection(address), task_queue, client=client))
    finally:
        here.get("Gate").release.set()
        there.get("Gate").release.set()


@pytest.fixture
async def gated(client: Client, task_queue: str, temporal_server: DevServer, store: Store,
                tmp_path: Path) -> AsyncIterator[Both]:
    async for both in _both(client, task_queue, temporal_server.address, store, tmp_path,
                            hang_gate=True):
        yield both


@pytest.fixture
async def open_gates(client: Client, task_queue: str, temporal_server: DevServer,
                     store: Store, tmp_path: Path) -> AsyncIterator[Both]:
    async for both in _both(client, task_queue, temporal_server.address, store, tmp_path,
                            hang_gate=False):
        yield both


Cancel = Callable[["asyncio.Task[AgentOutput]"], Awaitable[None]]


async def _cut(operator: AgentLoopOperator, registry: OperatorRegistry, run_id: str,
               cancel: Cancel) -> None:
    """Run ``run_id`` until its gate holds, cancel it there (``cancel``: how), and open the
    gate."""
    gate: agents.Gate = registry.get("Gate")
    running = asyncio.create_task(operator.aexecute("hello", run_id=run_id))
    assert await asyncio.to_thread(gate.entered.wait, WAIT_SECONDS)
    await cancel(running)
    with pytest.raises((asyncio.CancelledError, RunCancelledError)):
        await running
    gate.release.set()


async def test_a_run_cancelled_in_its_tool_round_resumes_in_as_many_turns_as_in_process(
        gated: Both, store: Store, client: Client) -> None:
    async def in_process(task: asyncio.Task[AgentOutput]) -> None:
        task.cancel()

    async def on_temporal(task: asyncio.Task[AgentOutput]) -> None:
        await gated.runs.cancel_run("wf-cut")

    await _cut(gated.local(), gated.here, "local-cut", in_process)
    await _cut(gated.temporal(), gated.there, "wf-cut", on_temporal)
    # Both keep the checkpoint from before the round they were cut short in.
    cut = [await store.latest_checkpoint(run_id) for run_id in ("local-cut", "wf-cut")]
    assert [checkpoint.turn if checkpoint else None for checkpoint in cut] == [0, 0]
    history = await client.get_workflow_handle("wf-cut").fetch_history()
    here = await gated.local().aresume_run("local-cut")
    there = await gated.temporal().aresume_run("wf-cut")
    assert here.turns_used == there.turns_used == 2
    local, temporal = await store.get_run("local-cut"), await store.get_run("wf-cut")
    assert (temporal.status, temporal.turns) == (local.status, local.turns)
    # The cut run's history took the patch, and replays.
    assert ROUND_CHECKPOINTS in patches_of(history)
    await replayed(history, client, gated.runs.task_queue, "counter")


async def test_a_run_cut_after_an_approval_waits_again_for_the_call_asked_again(
        gated: Both, store: Store) -> None:
    keeper = AgentLoopOperator("keeper", agents.definitions(gated.there)["keeper"],
                               gated.there, store=gated.runs)
    with pytest.raises(RunPaused):
        await keeper.aexecute("keep it", run_id="wf-kept")
    await decide_call(store, "wf-kept", "c1", approve=True, principal="bob")
    gate: agents.Gate = gated.there.get("Gate")
    going = asyncio.create_task(keeper.aresume_run("wf-kept"))
    assert await asyncio.to_thread(gate.entered.wait, WAIT_SECONDS)
    await gated.runs.cancel_run("wf-kept")  # cut while its approved call runs
    with pytest.raises((asyncio.CancelledError, RunCancelledError)):
        await going
    gate.release.set()
    # Taken up from before its round, its model asks for c1 again (the same id): a new
    # call, which waits for a decision of its own.
    with pytest.raises(RunPaused):
        await keeper.aresume_run("wf-kept")
    run = await store.get_run("wf-kept")
    assert [(p.turn, p.call_id, p.state) for p in run.pending_approvals] == [
        (1, "c1", "waiting")]
    await decide_call(store, "wf-kept", "c1", approve=True, principal="bob")
    assert (await keeper.aresume_run("wf-kept")).content.startswith("answer: ")


async def test_a_run_stopped_by_its_budget_resumes_in_as_many_turns_as_in_process(
        open_gates: Both, store: Store) -> None:
    # One model call stops it before turn 2's (a budget stops a run at a model call: its
    # last round is done, and turn 2, stopped before its answer, is not: both make it again).
    limit = "model_calls"
    with pytest.raises(AgentRunError) as here_stopped:
        await open_gates.local(**{limit: 1}).aexecute("hello", run_id=f"local-{limit}")
    # A run started through an operator takes the workers' budget: the limit is the start's.
    runs = open_gates.runs
    await (await runs.runner()).start("counter", "hello", run_id=f"wf-{limit}", max_turns=5,
                                      budget={limit: 1})
    with pytest.raises(AgentRunError) as there_stopped:
        await runs.follow(f"wf-{limit}", None, None)
    assert here_stopped.value.exit_reason == there_stopped.value.exit_reason == "budget"
    here = await open_gates.local(**{limit: 3}).aresume_run(f"local-{limit}")
    there = await open_gates.temporal(**{limit: 3}).aresume_run(f"wf-{limit}")
    assert here.turns_used == there.turns_used == 2
    assert here.usage.llm_calls == there.usage.llm_calls == 2
    local, temporal = (await store.get_run(f"local-{limit}"),
                       await store.get_run(f"wf-{limit}"))
    assert (temporal.status, temporal.turns) == (local.status, local.turns)
