"""Budgets shared beyond one run — a thread's, an API key's per period — kept in the store
(every backend), and the usage of every model call recorded there."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import pytest

from bloge import AgentRunError, BudgetExceededError, ProviderError
from bloge.agent import (
    AgentBuilder,
    AgentLoopOperator,
    AgentMemoryStrategy,
    Budget,
    BudgetPolicy,
    LlmSummarizer,
)
from bloge.agent.runtime import Claim, Spend
from bloge.core.context import OperatorContext, Principal
from bloge.core.registry import OperatorRegistry
from bloge.llm import LLM_CHAT, LlmChatOperator, LlmResponse, ScriptedProvider, ToolCall
from bloge.store import (
    Store,
    StoreCounters,
    StoreWriter,
    budget_spent,
    open_store,
    usage_report,
)
from bloge.store.recorder import Recorder
from bloge.store.thread_log import ThreadLog


def text(content: str = "done") -> LlmResponse:
    return LlmResponse(content, "stop", 100, 20)


def operator(store: Store, provider: ScriptedProvider, *, thread_budget: Budget | None = None,
             policy: BudgetPolicy | None = None, agent_id: str = "helper",
             summary: int | None = None) -> AgentLoopOperator:
    """``agent_id`` answering with ``provider``; with a ``summary(summary)`` memory if given,
    which summarizes with it too."""
    registry = OperatorRegistry()
    registry.register(LLM_CHAT, LlmChatOperator(provider))
    builder = AgentBuilder.create(agent_id, registry=registry).model("gpt-4o-mini")
    if thread_budget is not None:
        builder.thread_budget(thread_budget)
    summarizer = None
    if summary is not None:
        builder.memory(AgentMemoryStrategy.Summary(summary))
        summarizer = LlmSummarizer.through(registry, "gpt-4o-mini")
    return AgentLoopOperator(agent_id, builder.build(), registry, store=store, budgets=policy,
                             summarizer=summarizer)


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    async with open_store(store_url) as opened:
        yield opened


async def test_a_thread_budget_counts_every_run_on_the_thread(store: Store) -> None:
    provider = ScriptedProvider(text("one"), text("two"), text("three"))
    agent = operator(store, provider, thread_budget=Budget(model_calls=2))
    first = await agent.aexecute("hi", thread_id="t1")
    await agent.aexecute("again", thread_id="t1")
    with pytest.raises(BudgetExceededError) as caught:
        await agent.aexecute("once more", thread_id="t1")
    error = caught.value
    assert (error.scope, error.limit_name, error.limit, error.used) == ("thread", "model_calls",
                                                                        2, 2)
    assert error.run_id is not None
    assert first.thread_id == "t1"
    # Another thread has its own budget.
    assert (await agent.aexecute("hi", thread_id="t2")).content == "three"


async def test_a_thread_budget_counts_the_summaries_of_its_runs(store: Store) -> None:
    # The second run starts over 3 messages of the thread: it summarizes the first two.
    provider = ScriptedProvider(text("one"), LlmResponse("they said hi", "stop", 300, 20),
                                text("two"), text("three"))
    agent = operator(store, provider, thread_budget=Budget(model_calls=3), summary=2)
    await agent.aexecute("hi", thread_id="t1")
    second = await agent.aexecute("again", thread_id="t1")
    assert second.checkpoint.conversation[0].content.endswith("they said hi")
    spent = await budget_spent(store, "thread", "t1")
    assert spent is not None
    assert (spent.model_calls, spent.input_tokens, spent.output_tokens) == (3, 500, 60)
    with pytest.raises(BudgetExceededError) as caught:
        await agent.aexecute("once more", thread_id="t1")
    assert (caught.value.scope, caught.value.limit_name, caught.value.used) == (
        "thread", "model_calls", 3)


async def test_a_key_budget_counts_the_keys_runs_for_the_period(store: Store) -> None:
    provider = ScriptedProvider(text(), text())
    policy = BudgetPolicy(keys={"key:abc": Budget(tokens=140)}, answer_cap=20)
    agent = operator(store, provider, policy=policy)
    ctx = OperatorContext.root(principal=Principal("key:abc"))
    await agent.aexecute("hi", ctx)
    with pytest.raises(BudgetExceededError) as caught:
        await agent.aexecute("hi", ctx)
    assert (caught.value.scope, caught.value.limit_name, caught.value.used) == ("key", "tokens",
                                                                                120)
    # Another principal is not limited by this key's budget.
    other = OperatorContext.root(principal=Principal("key:other"))
    assert (await agent.aexecute("hi", other)).content == "done"


async def test_every_model_call_is_recorded_with_its_cost(store: Store) -> None:
    provider = ScriptedProvider(text(), text())
    agent = operator(store, provider)
    await agent.aexecute("hi", OperatorContext.root(principal=Principal("key:abc")))
    await agent.aexecute("hi")
    (line,) = await usage_report(store, by="agent")
    assert (line.group, line.model_calls, line.input_tokens, line.output_tokens) == (
        "helper", 2, 200, 40)
    assert line.usd == pytest.approx(2 * (100 * 0.15 + 20 * 0.60) / 1_000_000)
    by_key = {line.group: line.model_calls for line in await usage_report(store, by="key")}
    assert by_key == {"key:abc": 1, None: 1}


async def test_the_run_record_holds_its_usage_and_cost(store: Store) -> None:
    provider = ScriptedProvider(LlmResponse("", "tool_calls", 100, 20, tool_calls=(
        ToolCall("c1", "missing", "{}"),)), text())
    agent = operator(store, provider)
    output = await agent.aexecute("hi")
    run = await store.get_run(output.run_id or "")
    assert run.usage.llm_calls == 2
    assert run.usage.tool_calls == 1
    assert run.usage.cost_usd == pytest.approx(output.usage.cost_usd)
    assert output.usage.cost_usd > 0


async def test_two_workers_reserving_on_one_thread_budget_never_overshoot(
        durable_store_url: str) -> None:
    first, second = open_store(durable_store_url), open_store(durable_store_url)
    await first.migrate()
    try:
        thread = f"thread-{os.getpid()}-{id(first)}"
        claims = [Claim("thread", thread, "", Budget(tool_calls=25, model_calls=7))]
        workers = [StoreCounters(Recorder(store, StoreWriter(store), run_id=f"run-{n}",
                                          log=ThreadLog(store, thread, holder=f"run-{n}",
                                                        next_seq=1)),
                                 agent_id="a", principal=None)
                   for n, store in enumerate((first, second))]

        async def calls(counters: StoreCounters) -> int:
            granted = 0
            for _ in range(10):
                granted += await counters.reserve_tool_calls(claims, 2)
            return granted

        async def models(counters: StoreCounters) -> int:
            granted = 0
            for _ in range(6):
                granted += await counters.reserve(claims, Spend(model_calls=1)) is None
            return granted

        granted = await asyncio.gather(*(calls(w) for w in workers), *(models(w) for w in workers))
        assert granted[0] + granted[1] == 25
        assert granted[2] + granted[3] == 7
        spent = await budget_spent(first, "thread", thread)
        assert spent is not None
        assert (spent.tool_calls, spent.model_calls) == (25, 7)
    finally:
        await first.aclose()
        await second.aclose()


async def test_two_workers_running_one_keys_runs_at_once_share_its_budget(
        durable_store_url: str) -> None:
    first, second = open_store(durable_store_url), open_store(durable_store_url)
    await first.migrate()
    principal = f"key:{os.getpid()}{id(first)}"
    policy = BudgetPolicy(keys={principal: Budget(model_calls=3)})
    ctx = OperatorContext.root(principal=Principal(principal))
    try:
        workers = [operator(store, ScriptedProvider(text(), text()), policy=policy)
                   for store in (first, second)]
        ended = await asyncio.gather(*(worker.aexecute("hi", ctx) for worker in workers
                                       for _ in range(2)), return_exceptions=True)
        stopped = [e for e in ended if isinstance(e, BudgetExceededError)]
        assert len(stopped) == 1
        assert sum(1 for e in ended if not isinstance(e, BaseException)) == 3
        assert (stopped[0].scope, stopped[0].limit_name) == ("key", "model_calls")
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_failed_model_call_gives_its_reservation_back(store: Store) -> None:
    class Refusing:
        async def chat(self, request: object) -> LlmResponse:
            raise ProviderError("overloaded", provider="test", status_code=529)

    registry = OperatorRegistry()
    registry.register(LLM_CHAT, LlmChatOperator(Refusing()))
    definition = (AgentBuilder.create("helper", registry=registry).model("gpt-4o-mini")
                  .thread_budget(model_calls=5).build())
    agent = AgentLoopOperator("helper", definition, registry, store=store)
    with pytest.raises(AgentRunError, match="overloaded"):
        await agent.aexecute("hi", thread_id="t-failing")
    spent = await budget_spent(store, "thread", "t-failing")
    assert spent is not None
    assert (spent.model_calls, spent.input_tokens, spent.output_tokens) == (0, 0, 0)


async def test_prune_deletes_the_usage_and_counters_of_that_time(store: Store) -> None:
    provider = ScriptedProvider(text())
    agent = operator(store, provider, thread_budget=Budget(model_calls=5),
                     policy=BudgetPolicy(per_key=Budget(model_calls=5)))
    await agent.aexecute("hi", OperatorContext.root(principal=Principal("key:abc")),
                         thread_id="t-old")
    await store.prune(older_than=-1.0)  # everything is older than a second from now
    assert await usage_report(store) == []
    assert await budget_spent(store, "thread", "t-old") is None
