"""Cases run as recorded runs tagged as an eval: tools replayed or real, runs recorded into a
dataset and replayed, repetitions and their spread, another model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bloge import Agent, AgentDslCompiler, AgentLoopOperator, OperatorRegistry
from bloge.eval import (
    DatasetError,
    arun_dataset,
    dump_dataset,
    load_dataset,
    record_runs,
    select_runs,
)
from bloge.eval.dataset import Dataset
from bloge.llm import LlmChatOperator, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.llm.testing import FunctionProvider
from bloge.store import Store, open_store
from tests.handoffs.agents import billing, triage

AGENT = """
agent helper {
  model = "small-model"
  max_turns = 4
  tool lookup : Lookup {
    description = "Look an order up"
    input { order = tool_args.order }
  }
}
"""


class Lookup:
    """A tool with a side effect the tests count."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def __call__(self, input: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(input["order"])
        return {"order": input["order"], "status": "shipped"}


def answer(request: LlmRequest) -> LlmResponse:
    """Look the order up, then answer from the tool's result."""
    last = request.messages[-1]
    if last.role == "tool":
        return LlmResponse(f"Order status: {last.content}")
    return LlmResponse("", "tool_calls", tool_calls=(
        ToolCall("c1", "lookup", json.dumps({"order": last.content.split()[-1]})),))


def helper(lookup: Lookup, store: Store) -> tuple[AgentLoopOperator, FunctionProvider]:
    provider = FunctionProvider(answer)
    registry = OperatorRegistry({"Lookup": lookup, "llmChat": LlmChatOperator(provider)})
    definition = AgentDslCompiler(registry).compile(AGENT)
    return AgentLoopOperator("helper", definition, registry, store=store), provider


def dataset(tmp_path: Path, text: str) -> Dataset:
    path = tmp_path / "d.yaml"
    path.write_text(text, "utf-8")
    return load_dataset(path)


REPLAYED = """
cases:
  - name: replayed
    input: where is order 42
    fixtures:
      - {tool: lookup, arguments: {order: "42"}, result: {order: "42", status: lost}}
    expect:
      - contains: lost
      - tools: [{name: lookup, args: {order: "42"}}]
"""


async def test_replayed_tools_do_not_run_and_the_run_is_recorded_as_an_eval(tmp_path: Path) -> None:
    lookup = Lookup()
    async with open_store(f"sqlite:///{tmp_path}/runs.db") as store:
        agent, _ = helper(lookup, store)
        results = await arun_dataset(dataset(tmp_path, REPLAYED), agent)
        assert results.pass_rate == 1.0
        assert lookup.calls == []
        (run,) = results.cases[0].runs
        assert run.answer == 'Order status: {"order":"42","status":"lost"}'
        recorded = await store.get_run(run.run_id)
        thread = await store.get_thread(recorded.thread_id)
        assert thread.metadata["eval"] == {"id": results.eval_id, "dataset": "d",
                                           "case": "replayed", "repetition": 0}
        (call,) = await store.tool_calls(run.run_id, 1)
        assert (call.name, call.status, call.success) == ("lookup", "completed", True)


async def test_real_tools_run_when_asked(tmp_path: Path) -> None:
    lookup = Lookup()
    async with open_store("memory://") as store:
        agent, _ = helper(lookup, store)
        results = await arun_dataset(dataset(tmp_path, REPLAYED), agent, tools="real")
    assert lookup.calls == ["42"]
    (failure,) = results.cases[0].runs[0].failures
    assert failure == ("contains: the answer does not contain 'lost': "
                       "'Order status: {\"order\":\"42\",\"status\":\"shipped\"}'")


async def test_a_call_without_a_fixture_is_an_error_the_model_sees(tmp_path: Path) -> None:
    text = REPLAYED.replace("order 42", "order 7").replace("contains: lost", 'contains: "no recorded result"')
    text = text.replace('    fixtures:\n      - {tool: lookup, arguments: {order: "42"}, '
                        'result: {order: "42", status: lost}}\n', "")
    async with open_store("memory://") as store:
        agent, _ = helper(Lookup(), store)
        results = await arun_dataset(dataset(tmp_path, text), agent, tools="replay")
    (run,) = results.cases[0].runs
    assert "tool 'lookup' has no recorded result" in (run.answer or "")


async def test_recorded_runs_become_a_dataset_that_replays_them(tmp_path: Path) -> None:
    lookup = Lookup()
    async with open_store(f"sqlite:///{tmp_path}/runs.db") as store:
        agent, _ = helper(lookup, store)
        first = await agent.aexecute("where is order 42")
        await agent.aexecute("where is order 43")
        runs = await select_runs(store, since=0, agent="helper")
        data = await record_runs(store, runs)
        (tmp_path / "recorded.yaml").write_text(dump_dataset(data), "utf-8")
        recorded = load_dataset(tmp_path / "recorded.yaml")
        assert [c.reference for c in recorded.cases] == [
            first.content, 'Order status: {"order":"43","status":"shipped"}']
        results = await arun_dataset(recorded, agent)
        assert results.pass_rate == 1.0
        assert lookup.calls == ["42", "43"]  # the replay ran no tool
        # The eval's own runs are not recorded again.
        again = await select_runs(store, since=0, agent="helper")
        assert {r.id for r in again} == {r.id for r in runs}


async def test_repetitions_give_the_pass_rate_and_its_spread(tmp_path: Path) -> None:
    answers = iter(["yes", "no", "yes", "yes"])
    provider = FunctionProvider(lambda request: next(answers))
    registry = OperatorRegistry({"Lookup": Lookup(), "llmChat": LlmChatOperator(provider)})
    agent = AgentLoopOperator("helper", AgentDslCompiler(registry).compile(AGENT), registry)
    text = "cases:\n  - input: ok?\n    expect:\n      - equals: 'yes'\n"
    results = await arun_dataset(dataset(tmp_path, text), agent, repeat=4, concurrency=1)
    assert results.pass_rate == 0.75
    spread = results.spread()
    assert (spread.low, spread.high) == (0.0, 1.0)
    assert results.cases[0].pass_rate == 0.75


async def test_another_model_answers_when_asked(tmp_path: Path) -> None:
    async with open_store("memory://") as store:
        agent, provider = helper(Lookup(), store)
        results = await arun_dataset(dataset(tmp_path, REPLAYED), agent, model="big-model")
    assert results.model == "big-model"
    assert {r.model for r in provider.requests} == {"big-model"}


async def test_a_case_starts_after_a_stored_thread_without_changing_it(tmp_path: Path) -> None:
    async with open_store("memory://") as store:
        agent, provider = helper(Lookup(), store)
        earlier = await agent.aexecute("where is order 42")
        text = REPLAYED.replace("input: where is order 42",
                                f"thread: {earlier.thread_id}\n    input: where is order 42")
        results = await arun_dataset(dataset(tmp_path, text), agent)
        assert results.pass_rate == 1.0
        first_of_eval = provider.requests[2].messages
        assert [m.content for m in first_of_eval if m.role == "user"] == [
            "where is order 42", "where is order 42"]
        assert (await store.get_thread(earlier.thread_id)).message_count == 4


async def test_a_case_after_a_stored_thread_leaves_out_what_sub_agents_wrote_on_it(
        tmp_path: Path) -> None:
    async with open_store("memory://") as store:
        researcher = Agent(ScriptedProvider("Order 42 is late."), name="researcher",
                           store=store)
        caller = Agent(ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("r1", "researcher", '{"input": "why is 42 late?"}'),)), "It is late."),
            [researcher.as_tool(thread="parent")], name="triage", store=store)
        earlier = await caller.arun_output("where is order 42")
        agent, provider = helper(Lookup(), store)
        text = REPLAYED.replace("input: where is order 42",
                                f"thread: {earlier.thread_id}\n    input: where is order 42")
        results = await arun_dataset(dataset(tmp_path, text), agent)
    assert results.pass_rate == 1.0
    first_of_eval = provider.requests[0].messages
    assert [(m.role, m.content) for m in first_of_eval if m.role != "system"] == [
        ("user", "where is order 42"), ("assistant", ""), ("tool", "Order 42 is late."),
        ("assistant", "It is late."), ("user", "where is order 42")]


async def test_a_case_of_an_agent_that_hands_over_runs_on_with_the_agent_it_hands_to(
        tmp_path: Path) -> None:
    async with open_store("memory://") as store:
        billing_agent, _ = billing(store=store)
        triage_agent, _ = triage(handoffs=[billing_agent], store=store)
        results = await arun_dataset(dataset(tmp_path, """
agent: triage
cases:
  - name: refund
    input: refund order A1
    expect:
      - contains: Refunded A1
      - tools: [transfer_to_billing, refund]
"""), triage_agent, tools="real")
    (case,) = results.cases
    assert case.passed, case.runs


async def test_a_case_whose_call_waits_for_approval_fails_and_its_run_waits_for_nobody(
        tmp_path: Path) -> None:
    async with open_store("memory://") as store:
        lookup = Lookup()
        operator, _ = helper(lookup, store)
        definition = AgentDslCompiler(operator.registry).compile(
            AGENT.replace('description = "Look an order up"',
                          'description = "Look an order up"\n    requires_approval = true'))
        approving = AgentLoopOperator("helper", definition, operator.registry, store=store)
        results = await arun_dataset(dataset(tmp_path, """
agent: helper
cases:
  - name: status
    input: where is order 7
    expect:
      - contains: shipped
"""), approving, tools="real")
        (case,) = results.cases
        assert not case.passed
        (run_of_case,) = case.runs
        assert "an eval's run does not wait: it was cancelled" in str(run_of_case.error)
        assert run_of_case.run_id is not None
        run = await store.get_run(run_of_case.run_id)
        assert run.status.value == "cancelled"
        assert lookup.calls == []


@pytest.mark.parametrize(("changed", "where"), [
    ("{tool: lookup,", "d.yaml:6: cases[0].fixtures[0].tool: unknown tool 'lokup'"),
    ("tools: [{name: lookup,", "d.yaml:9: cases[0].expect[1].tools[0]: unknown tool 'lokup'"),
])
async def test_a_tool_name_the_agent_lacks_is_refused_before_any_run(
        tmp_path: Path, changed: str, where: str) -> None:
    text = REPLAYED.replace(changed, changed.replace("lookup", "lokup"))
    async with open_store("memory://") as store:
        agent, provider = helper(Lookup(), store)
        with pytest.raises(DatasetError) as raised:
            await arun_dataset(dataset(tmp_path, text), agent)
    assert str(raised.value) == (f"{tmp_path / where}; did you mean 'lookup'? (the tools of "
                                 "agent 'helper': lookup)")
    assert provider.requests == []


async def test_a_tool_never_called_is_one_of_the_agents(tmp_path: Path) -> None:
    text = REPLAYED + "      - not-called: [lookup, escalate]\n"
    async with open_store("memory://") as store:
        agent, _ = helper(Lookup(), store)
        with pytest.raises(DatasetError) as raised:
            await arun_dataset(dataset(tmp_path, text), agent)
    assert str(raised.value).endswith(
        "d.yaml:10: cases[0].expect[2].not-called[1]: unknown tool 'escalate' (the tools of "
        "agent 'helper': lookup)")


async def test_a_case_after_a_thread_the_store_lacks_is_refused_at_its_line(
        tmp_path: Path) -> None:
    text = REPLAYED.replace("input: where is order 42",
                            "thread: nosuch-thread-id\n    input: where is order 42")
    async with open_store("memory://") as store:
        agent, provider = helper(Lookup(), store)
        with pytest.raises(DatasetError) as raised:
            await arun_dataset(dataset(tmp_path, text), agent)
    assert str(raised.value) == (f"{tmp_path}/d.yaml:4: cases[0].thread: case 'replayed': run "
                                 "store memory://: no thread 'nosuch-thread-id'")
    assert provider.requests == []
