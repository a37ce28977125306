"""A resumed run continues a tool round from the ledger: the calls whose results it reads
from there are marked replayed, and counted once — in /metrics and in the timeline."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.journal import render_timeline
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.server.metrics import Metrics
from bloge.store import RecordedRuns, RunStatus, Store, ops
from bloge.store.timeline import run_timeline
from tests.store.probes import ProbedWriter

AGENT = """
agent helper {
  model = "gpt-4o"
  max_turns = 4
  tool lookup : Lookup { input { q = tool_args.q } }
  tool ship : Ship { input { item = tool_args.item } }
}
"""


def answer(request: LlmRequest) -> LlmResponse:
    if not any(m.role == "tool" for m in request.messages):
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("c1", "lookup", '{"q": "kb"}'), ToolCall("c2", "ship", '{"item": "book"}')))
    return LlmResponse("Done.")


class Round:
    """Lookup answers; ship, the first time, stops the run once lookup's result is in the
    ledger (as a crash would, in the middle of the round)."""

    def __init__(self, store: Store) -> None:
        #: The store's writer, probed.
        self.writer = ProbedWriter(store)
        self.lookups = 0
        self.run: asyncio.Task[object] | None = None
        self.recorded = asyncio.Event()
        write = self.writer.write

        async def noting_write(batch: Sequence[ops.Op]) -> None:
            await write(batch)
            if any(isinstance(op, ops.CompleteToolCall) and op.call_id == "c1" for op in batch):
                self.recorded.set()

        self.writer.write = noting_write  # type: ignore[method-assign]  # the test's probe

    def lookup(self, input: dict) -> dict:
        self.lookups += 1
        return {"found": input["q"]}

    async def ship(self, input: dict) -> str:
        if self.run is not None:
            await self.recorded.wait()
            self.run.cancel()
            await asyncio.Event().wait()
        return "shipped"


def helper(store: Store, tools: Round, metrics: Metrics) -> AgentLoopOperator:
    registry = (OperatorRegistry.builder()
                .register("Lookup", tools.lookup).register("Ship", tools.ship)
                .register("llmChat", LlmChatOperator(FunctionProvider(answer))).build())
    definition = AgentDslCompiler(registry).compile(AGENT)
    return AgentLoopOperator("helper", definition, registry,
                             store=RecordedRuns(store, writer=tools.writer), listeners=[metrics])


async def resumed(store: Store) -> tuple[str, Round, Metrics]:
    tools, metrics = Round(store), Metrics()
    agent = helper(store, tools, metrics)
    tools.run = asyncio.create_task(agent.aexecute("Find kb and ship the book"))
    with pytest.raises(asyncio.CancelledError):
        await tools.run
    tools.run = None
    (stopped,) = await store.list_runs()
    assert stopped.status is RunStatus.CANCELLED
    output = await agent.aresume_run(stopped.id)
    assert output.content == "Done."
    return stopped.id, tools, metrics


async def test_a_call_answered_from_the_ledger_is_marked_replayed(store: Store) -> None:
    run_id, _, _ = await resumed(store)
    events = await store.run_events(run_id)
    tool_events = [(e.type, e.body["tool_call_id"], e.body["replayed"]) for e in events
                   if e.type in {"on_agent_tool_dispatched", "on_agent_tool_completed"}]
    assert tool_events.count(("on_agent_tool_dispatched", "c1", True)) == 1
    assert tool_events.count(("on_agent_tool_completed", "c1", True)) == 1
    assert tool_events.count(("on_agent_tool_completed", "c1", False)) == 1


async def test_a_run_cancelled_in_the_middle_of_a_round_resumes_it_from_the_ledger(
        store: Store) -> None:
    # Before, the run's end recorded a checkpoint of the turn as if its round were done: the
    # resumed run asked the model again and ran the lookup a second time.
    _, tools, _ = await resumed(store)
    assert tools.lookups == 1


async def test_metrics_count_a_replayed_call_once(store: Store) -> None:
    _, _, metrics = await resumed(store)
    lookups = metrics.registry.get_sample_value(
        "bloge_tool_calls_total", {"agent": "helper", "tool": "lookup", "outcome": "ok"})
    assert lookups == 1.0


async def test_the_timeline_shows_a_replayed_call_as_replayed(store: Store) -> None:
    run_id, _, _ = await resumed(store)
    lines = render_timeline(run_timeline(run_id, await store.run_events(run_id)))
    completed = [line for line in lines if "tool_completed" in line and " c1 " in line]
    assert len(completed) == 2
    assert "replayed" not in completed[0]
    assert "replayed" in completed[1]


async def test_a_run_that_continued_a_round_records_the_checkpoint_of_its_end(
        store: Store) -> None:
    run_id, _, _ = await resumed(store)
    run = await store.get_run(run_id)
    checkpoint = await store.latest_checkpoint(run_id)
    assert checkpoint is not None
    assert checkpoint.turn == run.turns == 2
