"""A worker's budget policy (``bloge.budgets``): its runs keep its default run limits, prices
and answer cap as a local run does; not its ``time``, and no thread budget (refused). On a
real dev server, with a worker in this process; ``counter`` makes two model calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge import AgentDef, AgentLoopOperator, AgentOutput, AgentRunError, OperatorRegistry
from bloge.agent import (
    AgentMemoryStrategy,
    Budget,
    BudgetExceededError,
    BudgetPolicy,
    LlmSummarizer,
    MemorySummarizedPayload,
)
from bloge.core.errors import BlogeUsageError, RunError
from bloge.llm.prices import ModelPrice, PriceTable
from bloge.temporal import (
    AgentWorkflow,
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    catalogue,
    served_agents,
    wire,
)
from bloge.temporal.activities import AgentActivities
from bloge.temporal.patches import POLICY_BUDGETS, SUMMARY_CALLS, THREAD_BUDGETS_REFUSED
from bloge.temporal.worker import PASSED_THROUGH
from tests.server.live_server import LiveServer
from tests.temporal import agents
from tests.temporal.conftest import StoredAgents
from tests.temporal.test_workflow import _patches, _replayed

pytestmark = pytest.mark.usefixtures("temporal_server")

#: ``test-model``'s price, in US dollars per million tokens.
PRICED = PriceTable(overrides={"test-model": ModelPrice(1_000.0, 2_000.0)})

#: ``counter`` with a ``summary(2)`` memory: its turn 2 summarizes turn 1's user message.
SUMMARIZED = {"memory_strategy": AgentMemoryStrategy.Summary(2)}

Serving = Callable[..., AbstractAsyncContextManager[TemporalRunner]]


@pytest.fixture
def serving(client: Client, task_queue: str, tmp_path: Path) -> Serving:
    """``async with serving(policy, counter=…) as runner:`` a worker for the test agents
    budgeted with ``policy`` (``counter``'s definition changed by ``counter`` if given)."""

    @asynccontextmanager
    async def serve(policy: BudgetPolicy | None, *,
                    counter: dict[str, Any] | None = None) -> AsyncIterator[TemporalRunner]:
        registry = agents.registry(tmp_path / "count.log")
        options = TemporalOptions(task_queue=task_queue)
        served = served_agents(_definitions(registry, counter), registry, options,
                               budgets=policy)
        async with agent_worker(client, served, options):
            try:
                yield TemporalRunner(client, task_queue)
            finally:
                registry.get("Gate").release.set()

    return serve


def _definitions(registry: OperatorRegistry,
                 counter: dict[str, Any] | None = None) -> dict[str, AgentDef]:
    definitions: dict[str, AgentDef] = agents.definitions(registry)
    if counter:
        definitions["counter"] = replace(definitions["counter"], **counter)
    return definitions


async def _in_process(tmp_path: Path, policy: BudgetPolicy, message: str = "hello", *,
                      counter: dict[str, Any] | None = None) -> AgentOutput:
    """``counter``'s run of ``message`` in this process (its definition changed by
    ``counter`` if given), budgeted with ``policy``, as a local run is."""
    registry = agents.registry(tmp_path / "here.log")
    definition = _definitions(registry, counter)["counter"]
    summarizer = LlmSummarizer.of_agent(definition.memory_strategy, registry, definition.model)
    try:
        operator = AgentLoopOperator("counter", definition, registry, budgets=policy,
                                     summarizer=summarizer)
        return await operator.aexecute(message)
    finally:
        registry.get("Gate").release.set()


async def test_a_workers_default_run_budget_stops_a_run_as_in_process(
        serving: Serving, tmp_path: Path) -> None:
    policy = BudgetPolicy(run=Budget(model_calls=1))
    with pytest.raises(BudgetExceededError) as here:
        await _in_process(tmp_path, policy)
    async with serving(policy) as runner:
        with pytest.raises(BudgetExceededError) as there:
            await runner.run("counter", "hello", run_id="default-1")
    assert there.value.exit_reason == here.value.exit_reason == "budget"
    assert "the run's model_calls budget of 1 would be exceeded (used 1" in str(here.value)
    # The same stop, named alike (bloge run prints the --budget that lets it go on).
    assert str(there.value) == str(here.value)
    assert ((there.value.scope, there.value.limit_name, there.value.limit, there.value.used,
             there.value.needed) == (here.value.scope, here.value.limit_name,
                                     here.value.limit, here.value.used, here.value.needed))
    # Stopped before its second model call, with the first one's tool round done.
    assert there.value.checkpoint.turn_count == here.value.checkpoint.turn_count


async def test_the_agents_own_run_limits_win_over_the_workers_defaults(
        serving: Serving) -> None:
    async with serving(BudgetPolicy(run=Budget(model_calls=1, tool_calls=9))) as runner:
        output = await runner.run("counter", "hello", budget={"model_calls": 2})
    assert output.exit_reason == "stop"
    assert output.usage.llm_calls == 2


async def test_a_run_on_a_worker_is_priced_with_its_workers_prices(
        serving: Serving, tmp_path: Path) -> None:
    policy = BudgetPolicy(run=Budget(usd=100.0), prices=PRICED)
    here = await _in_process(tmp_path, policy)
    async with serving(policy) as runner:
        there = await runner.run("counter", "hello")
    assert here.usage.cost_usd > 0
    assert there.usage.cost_usd == pytest.approx(here.usage.cost_usd)


async def test_a_run_on_a_worker_asks_for_its_workers_answer_cap_as_in_process(
        serving: Serving, tmp_path: Path) -> None:
    # counter has no max_tokens of its own: a token limit makes its calls reserve, and
    # carry, the policy's answer cap (the model answers with the max_tokens it was sent).
    policy = BudgetPolicy(run=Budget(tokens=100_000), answer_cap=256)
    here = await _in_process(tmp_path, policy, "cap")
    async with serving(policy) as runner:
        there = await runner.run("counter", "cap")
    assert there.content == here.content == "max_tokens 256"


async def test_a_model_call_scheduled_before_workflows_sent_max_tokens_asks_the_agents(
        tmp_path: Path) -> None:
    # Its payload, from a workflow begun on an older worker, has no max_tokens.
    registry = agents.registry(tmp_path / "count.log")
    served = served_agents(_definitions(registry, {"max_tokens": 64}), registry,
                           TemporalOptions(task_queue="q"))
    payload = {"agent": "counter", "run_id": "older", "turn": 1, "thread_id": None,
               "model": "test-model", "temperature": None, "context": {},
               "messages": [{"role": "user", "content": "cap"}]}
    answer = await ActivityEnvironment().run(AgentActivities(served).model, payload)
    assert wire.response_from_json(json.loads(answer.payload.data)).content == "max_tokens 64"


async def test_a_model_call_asks_only_the_fallbacks_its_workflow_let_it_ask(
        tmp_path: Path) -> None:
    # The workflow's budget left the agent's pricier fallback out of the call.
    registry = agents.registry(tmp_path / "count.log")
    served = served_agents(_definitions(registry, {"fallback": ("pricey-model",)}), registry,
                           TemporalOptions(task_queue="q"))
    payload = {"agent": "counter", "run_id": "cut", "turn": 1, "thread_id": None,
               "model": "test-model", "temperature": None, "context": {},
               "messages": [{"role": "user", "content": "down"}]}
    activities = AgentActivities(served)
    answer = await ActivityEnvironment().run(activities.model, payload)
    assert wire.response_from_json(json.loads(answer.payload.data)).content == (
        "answered by pricey-model")
    with pytest.raises(ApplicationError, match="overloaded"):
        await ActivityEnvironment().run(activities.model, {**payload, "fallback": []})


async def test_a_usd_limit_on_a_model_without_a_price_fails_the_run_at_its_start(
        serving: Serving, tmp_path: Path) -> None:
    policy = BudgetPolicy(run=Budget(usd=1.0))
    with pytest.raises(BlogeUsageError, match="no price for model 'test-model'") as here:
        await _in_process(tmp_path, policy)
    async with serving(policy) as runner:
        with pytest.raises(RunError) as there:
            await runner.run("counter", "hello")
    assert str(here.value) in str(there.value)
    assert "bloge.budgets.prices" in str(there.value)


async def test_a_workers_default_time_is_not_kept(serving: Serving) -> None:
    # A local run with no time left stops before its first model call.
    async with serving(BudgetPolicy(run=Budget(time=0.0))) as runner:
        output = await runner.run("counter", "hello")
    assert output.exit_reason == "stop"


async def test_a_run_of_an_agent_with_a_thread_budget_is_refused_on_a_worker(
        serving: Serving, tmp_path: Path) -> None:
    async with serving(None, counter={"thread_budget": Budget(usd=5.0)}) as runner:
        with pytest.raises(RunError, match=r"agent 'counter' has a thread budget \(budget "
                                           r"thread \{ … \}\), which runs on Temporal"):
            await runner.run("counter", "hello")
    assert not (tmp_path / "count.log").exists()  # refused before anything ran


async def test_a_run_under_a_workers_policy_replays(serving: Serving, client: Client,
                                                    task_queue: str) -> None:
    async with serving(BudgetPolicy(run=Budget(model_calls=1))) as runner:
        with pytest.raises(AgentRunError):
            await runner.run("counter", "hello", run_id="policy-replay")
        history = await client.get_workflow_handle("policy-replay").fetch_history()
        await _replayed(history, client, task_queue, "counter")
    assert _patches(history) == [POLICY_BUDGETS]


async def test_a_run_without_a_policy_asks_no_patch(serving: Serving, client: Client) -> None:
    async with serving(None) as runner:
        await runner.run("counter", "hello", run_id="no-policy")
    assert _patches(await client.get_workflow_handle("no-policy").fetch_history()) == []


@pytest.mark.parametrize(("patch", "counter"), [
    (POLICY_BUDGETS, None), (THREAD_BUDGETS_REFUSED, {"thread_budget": Budget(usd=5.0)})])
async def test_a_run_begun_before_the_patch_replays_on_todays_worker(
        serving: Serving, client: Client, task_queue: str, tmp_path: Path, patch: str,
        counter: dict[str, Any] | None) -> None:
    """A worker from before ``patch`` ran ``counter`` to its answer, its policy (or its
    thread budget) not kept; today's worker, which would stop (or refuse) it, replays it."""
    policy = BudgetPolicy(run=Budget(model_calls=1))
    history = await _run_before(client, task_queue, tmp_path, policy, counter, patch)
    async with serving(policy, counter=counter):
        await _replayed(history, client, task_queue, "counter")
    assert _patches(history) == []


async def _run_before(client: Client, task_queue: str, tmp_path: Path,
                      policy: BudgetPolicy, counter: dict[str, Any] | None,
                      refused: str) -> WorkflowHistory:
    """The history of a ``counter`` run on a worker of today's code that does not take the
    ``refused`` patch, as a worker from before it ran it."""
    registry = agents.registry(tmp_path / "before.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(_definitions(registry, counter), registry, options,
                           budgets=policy if refused in (POLICY_BUDGETS, SUMMARY_CALLS)
                           else None)
    catalogue.file(task_queue, served)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    try:
        async with Worker(client, task_queue=task_queue, workflows=[AgentWorkflow],
                          activities=AgentActivities(served).all(),
                          workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
                          patch_activation_callback=lambda asked: asked.patch_id != refused):
            output = await TemporalRunner(client, task_queue).run(
                "counter", "hello", run_id=f"before-{refused}")
    finally:
        catalogue.withdraw(task_queue, list(served))
        registry.get("Gate").release.set()
    assert output.exit_reason == "stop"
    return await client.get_workflow_handle(f"before-{refused}").fetch_history()


async def test_a_summary_on_a_worker_is_a_model_call_of_the_run_as_in_process(
        serving: Serving, client: Client, task_queue: str, tmp_path: Path) -> None:
    # counter's turn 2 goes on from a summary of its turn 1: reserved, sent with the answer
    # cap a money limit needs, and priced (its 40,000 prompt tokens: $40).
    policy = BudgetPolicy(run=Budget(usd=100.0), prices=PRICED, answer_cap=64)
    here = await _in_process(tmp_path, policy, counter=SUMMARIZED)
    async with serving(policy, counter=SUMMARIZED) as runner:
        there = await runner.run("counter", "hello", run_id="summarized")
        history = await client.get_workflow_handle("summarized").fetch_history()
        await _replayed(history, client, task_queue, "counter")
    summary = "Summary of the earlier conversation:\nsummarized, max_tokens 64"
    assert there.checkpoint.conversation[0].content == summary
    assert here.checkpoint.conversation[0].content == summary
    assert there.usage.llm_calls == here.usage.llm_calls == 3
    spent = PRICED.price("test-model")
    assert there.usage.cost_usd == pytest.approx(
        spent.cost(5, 1) + spent.cost(40_000, 8) + spent.cost(7, 3))
    assert there.usage.cost_usd == pytest.approx(here.usage.cost_usd)
    assert _patches(history) == [POLICY_BUDGETS, SUMMARY_CALLS]


class Summaries:
    """The ``on_agent_memory_summarized`` callbacks a worker's listener is given."""

    def __init__(self) -> None:
        self.told: list[MemorySummarizedPayload] = []

    def on_agent_memory_summarized(self, context: object,
                                   payload: MemorySummarizedPayload) -> None:
        self.told.append(payload)


async def test_a_summary_on_a_worker_is_told_to_its_listeners_and_is_an_event_of_the_run(
        stored_agents: StoredAgents, tmp_path: Path) -> None:
    heard = Summaries()
    here = Summaries()
    registry = agents.registry(tmp_path / "here.log")
    definition = _definitions(registry, SUMMARIZED)["counter"]
    try:
        await AgentLoopOperator("counter", definition, registry, listeners=[here],
                                summarizer=LlmSummarizer.through(registry, definition.model),
                                ).aexecute("hello")
    finally:
        registry.get("Gate").release.set()
    options = TemporalOptions(task_queue=stored_agents.task_queue)
    served = served_agents(_definitions(stored_agents.registry, SUMMARIZED),
                           stored_agents.registry, options, listeners=[heard])
    async with agent_worker(stored_agents.client, served, options,
                            store=stored_agents.store):
        runs = stored_agents.runs()
        output = await AgentLoopOperator(
            "counter", served["counter"].definition, stored_agents.registry,
            store=runs).aexecute("hello")
    assert output.run_id is not None
    [summary] = heard.told
    [local] = here.told
    assert (summary.turn_number, summary.model, summary.prompt_tokens,
            summary.completion_tokens, summary.messages_summarized) == (
        local.turn_number, local.model, local.prompt_tokens, local.completion_tokens,
        local.messages_summarized) == (2, "test-model", 40_000, 8, 1)
    events = await stored_agents.store.run_events(output.run_id)
    kinds = [event.type for event in events if event.type in (
        "on_agent_turn_started", "on_agent_memory_summarized")]
    assert kinds == ["on_agent_turn_started", "on_agent_memory_summarized",
                     "on_agent_turn_started"]


async def test_a_run_begun_before_summaries_were_model_calls_replays_on_todays_worker(
        serving: Serving, client: Client, task_queue: str, tmp_path: Path) -> None:
    """A worker from before ``SUMMARY_CALLS`` ran ``counter`` to its answer, its summary
    unpriced; today's worker, which prices the summary ($40) and so stops such a run at its
    next model call, replays it."""
    policy = BudgetPolicy(run=Budget(usd=1.0), prices=PRICED, answer_cap=64)
    history = await _run_before(client, task_queue, tmp_path, policy, SUMMARIZED,
                                SUMMARY_CALLS)
    async with serving(policy, counter=SUMMARIZED) as runner:
        await _replayed(history, client, task_queue, "counter")
        with pytest.raises(BudgetExceededError, match=r"usd budget of \$1.0000 would be exceeded \(used \$40"):
            await runner.run("counter", "hello", run_id="summarized-today")
    assert _patches(history) == [POLICY_BUDGETS]


@pytest.mark.parametrize("policy", [BudgetPolicy(thread=Budget(usd=5.0)),
                                    BudgetPolicy(per_key=Budget(usd=20.0)),
                                    BudgetPolicy(keys={"key:1a2b3c4d5e6f": Budget(usd=1.0)})])
def test_a_worker_refuses_a_policy_with_thread_or_key_budgets(
        tmp_path: Path, policy: BudgetPolicy) -> None:
    registry = agents.registry(tmp_path / "count.log")
    with pytest.raises(BlogeUsageError, match="cannot be kept by runs on Temporal workers"):
        served_agents(_definitions(registry), registry, TemporalOptions(task_queue="q"),
                      budgets=policy)


async def test_a_completion_a_budget_stopped_on_a_worker_is_a_402_as_in_process(
        stored_agents: StoredAgents) -> None:
    definitions = stored_agents.definitions
    budgeted = replace(stored_agents, definitions={
        **definitions, "counter": replace(definitions["counter"],
                                          budget=Budget(model_calls=1))})
    async with budgeted.worker():
        with LiveServer(budgeted.app("counter")) as server:
            async with httpx.AsyncClient(timeout=60) as http:
                stopped = await http.post(server.url("/v1/chat/completions"), json={
                    "model": "counter", "messages": [{"role": "user", "content": "hello"}]})
    assert stopped.status_code == 402, stopped.text
    error = stopped.json()["error"]
    assert (error["type"], error["code"]) == ("insufficient_quota", "budget_exceeded")
    assert '{"budget": {"model_calls": <higher>}}' in error["message"]
