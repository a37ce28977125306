"""A run's budget: enforced before the spend, and a resumable stop when it runs out."""

from __future__ import annotations

import json

import pytest

from bloge import Agent, BlogeUsageError, BudgetExceededError, GuardrailTrippedError
from bloge.agent import Budget, BudgetPolicy, tool_call_guard
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.llm.prices import ModelPrice, PriceTable


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def batch(calls: int, tool: str = "lookup") -> LlmResponse:
    """One answer asking for ``calls`` parallel calls of ``tool``."""
    return LlmResponse("", "tool_calls", 10, 5, tool_calls=tuple(
        ToolCall(f"call_{n}", tool, json.dumps({"key": f"k{n}"})) for n in range(calls)))


def text(content: str = "done", prompt: int = 10, completion: int = 5) -> LlmResponse:
    return LlmResponse(content, "stop", prompt, completion)


def test_a_batch_of_20_calls_against_a_budget_of_5_runs_the_first_5_and_refuses_the_rest() -> None:
    provider = ScriptedProvider(batch(20), text())
    agent = Agent(provider, [lookup], model="gpt-4o", budget={"tool_calls": 5})
    output = agent.run_output("go")
    tool_messages = [m for m in output.messages if m.role == "tool"]
    assert len(tool_messages) == 20
    ran = [m for m in tool_messages if not m.is_error]
    refused = [m for m in tool_messages if m.is_error]
    assert [m.tool_call_id for m in ran] == [f"call_{n}" for n in range(5)]
    assert len(refused) == 15
    assert "tool-call budget (5 calls) allowed only 5" in refused[0].content
    assert output.usage.tool_calls == 5


def test_a_round_no_call_fits_stops_the_run_before_anything_runs() -> None:
    ran: list[str] = []

    def record(key: str) -> str:
        """Record a key."""
        ran.append(key)
        return key

    provider = ScriptedProvider(batch(2, "record"), batch(3, "record"))
    agent = Agent(provider, [record], model="gpt-4o", budget={"tool_calls": 2})
    with pytest.raises(BudgetExceededError) as caught:
        agent.run_output("go")
    error = caught.value
    assert ran == ["k0", "k1"]
    assert (error.scope, error.limit_name, error.limit, error.used, error.needed) == (
        "run", "tool_calls", 2, 2, 3)
    assert error.exit_reason == "budget"
    assert "tool_calls budget of 2 would be exceeded" in str(error)
    # The refused round's request is not in the checkpoint: a resume asks the model again.
    assert error.checkpoint.conversation[-1].role == "tool"


def test_a_model_call_whose_worst_case_does_not_fit_is_never_made() -> None:
    provider = ScriptedProvider(text())
    agent = Agent(provider, [], model="gpt-4o", max_tokens=1000, budget={"tokens": 500})
    with pytest.raises(BudgetExceededError) as caught:
        agent.run_output("hello")
    assert provider.requests == []
    error = caught.value
    assert (error.limit_name, error.used, error.step) == ("tokens", 0, "model call")
    assert error.needed > 1000


def test_a_token_budget_sends_the_default_answer_cap_as_max_tokens() -> None:
    provider = ScriptedProvider(text())
    policy = BudgetPolicy(answer_cap=256)
    Agent(provider, [], model="gpt-4o", budget={"tokens": 5000}, budgets=policy).run("hi")
    assert provider.requests[0].max_tokens == 256


def test_the_agents_max_tokens_is_the_reserved_answer() -> None:
    provider = ScriptedProvider(text())
    Agent(provider, [], model="gpt-4o", max_tokens=64, budget={"tokens": 5000}).run("hi")
    assert provider.requests[0].max_tokens == 64


def test_a_run_without_limits_sends_no_max_tokens() -> None:
    provider = ScriptedProvider(text())
    Agent(provider, [], model="gpt-4o").run("hi")
    assert provider.requests[0].max_tokens is None


def test_usage_counts_the_cost_of_each_call_at_the_price_table() -> None:
    provider = ScriptedProvider(text(prompt=1_000_000, completion=100_000))
    output = Agent(provider, [], model="gpt-4o-2024-08-06").run_output("hi")
    assert output.usage.cost_usd == pytest.approx(2.50 + 1.00)


def test_a_money_budget_stops_before_the_call_that_could_pass_it() -> None:
    provider = ScriptedProvider(batch(1), text())
    prices = PriceTable(overrides={"house-model": ModelPrice(1000.0, 1000.0)})
    agent = Agent(provider, [lookup], model="house-model", max_tokens=80,
                  budget={"usd": 0.1}, budgets=BudgetPolicy(prices=prices))
    with pytest.raises(BudgetExceededError) as caught:
        agent.run_output("go")
    error = caught.value
    assert error.limit_name == "usd"
    assert error.used == pytest.approx((10 + 5) * 1000 / 1_000_000)
    assert len(provider.requests) == 1


def test_a_money_budget_on_a_model_without_a_price_is_refused_at_the_start() -> None:
    agent = Agent(ScriptedProvider(text()), [], model="my-own-model", budget={"usd": 1})
    with pytest.raises(BlogeUsageError, match=r"no price for model 'my-own-model'.*"
                                              r"bloge\.budgets\.prices"):
        agent.run("hi")


def test_model_calls_are_limited() -> None:
    provider = ScriptedProvider(batch(1), batch(1), text())
    agent = Agent(provider, [lookup], model="gpt-4o", budget={"model_calls": 2})
    with pytest.raises(BudgetExceededError) as caught:
        agent.run_output("go")
    assert (caught.value.limit_name, caught.value.used) == ("model_calls", 2)
    assert len(provider.requests) == 2


def test_a_spent_time_budget_stops_the_run_before_its_first_call() -> None:
    provider = ScriptedProvider(text())
    agent = Agent(provider, [], model="gpt-4o", budget=Budget(time=0))
    with pytest.raises(BudgetExceededError) as caught:
        agent.run("hi")
    assert caught.value.limit_name == "time"
    assert provider.requests == []


def test_a_budget_stop_resumes_from_its_checkpoint_with_a_higher_limit() -> None:
    provider = ScriptedProvider(batch(1), batch(1), text("finished"))
    agent = Agent(provider, [lookup], model="gpt-4o", budget={"model_calls": 2})
    with pytest.raises(BudgetExceededError) as caught:
        agent.run_output("go")
    raised = Agent(provider, [lookup], model="gpt-4o", budget={"model_calls": 3})
    output = raised.resume(caught.value.checkpoint)
    assert output.content == "finished"
    assert output.usage.llm_calls == 3
    assert output.usage.tool_calls == 2


class FallbackAnswer:
    """A provider whose answer names the model that gave it and its cache use, as a
    provider with fallback models and prompt caching reports them."""

    def __init__(self) -> None:
        self.requests: list[object] = []

    async def chat(self, request: object) -> LlmResponse:
        self.requests.append(request)
        answer = text(prompt=1_000_000, completion=0)
        # The fields another change adds to LlmResponse; duck-typed here.
        return _Answered(answer, model="claude-sonnet-4-20250514",
                         cache_read_tokens=1_000_000, cache_write_tokens=0)

    def stream_chat(self, request: object) -> object:
        raise AssertionError("not streamed")


class _Answered(LlmResponse):
    __slots__ = ("cache_read_tokens", "cache_write_tokens", "model")

    def __init__(self, base: LlmResponse, *, model: str, cache_read_tokens: int,
                 cache_write_tokens: int) -> None:
        super().__init__(base.content, base.finish_reason, base.prompt_tokens,
                         base.completion_tokens)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "cache_read_tokens", cache_read_tokens)
        object.__setattr__(self, "cache_write_tokens", cache_write_tokens)


def test_a_call_is_priced_at_the_model_that_answered_it_and_its_cache_reads() -> None:
    output = Agent(FallbackAnswer(), [], model="gpt-4o").run_output("hi")
    assert output.usage.cost_usd == pytest.approx(0.30)  # 1M cached tokens of Claude Sonnet 4


def order(order_id: str) -> LlmResponse:
    """An answer asking to look order ``order_id`` up."""
    return LlmResponse("", "tool_calls", 10, 5, tool_calls=(
        ToolCall(f"call_{order_id}", "lookup", json.dumps({"key": order_id})),))


def test_a_call_a_guard_refused_does_not_count_against_the_tool_call_budget() -> None:
    guard = tool_call_guard(name="big", when='(tool_args.key ?? "") == "999"', action="reject")
    provider = ScriptedProvider(order("999"), order("1"), text())
    agent = Agent(provider, [lookup], model="gpt-4o", budget={"tool_calls": 1},
                  guards=[guard])
    output = agent.run_output("go")
    assert output.usage.tool_calls == 1
    assert [m.content for m in output.messages if m.role == "tool"][-1] == "value of 1"


def test_a_round_a_guard_stopped_ran_no_tool_call() -> None:
    guard = tool_call_guard(name="big", when='(tool_args.key ?? "") == "999"')
    agent = Agent(ScriptedProvider(order("999")), [lookup], model="gpt-4o", guards=[guard])
    with pytest.raises(GuardrailTrippedError) as caught:
        agent.run_output("go")
    assert caught.value.checkpoint.usage.tool_calls == 0
