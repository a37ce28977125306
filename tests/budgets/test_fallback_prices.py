"""A usd budget with fallback models and aliases: each model a call may ask is priced as
itself (as it is sent on the wire) before it is asked, and the call is charged at the
model that answered."""

from __future__ import annotations

import pytest

from bloge import Agent, BlogeUsageError, BudgetExceededError
from bloge.agent import BudgetPolicy
from bloge.core import ProviderError
from bloge.llm import LlmResponse
from bloge.llm.aliases import ModelAliases
from bloge.llm.prices import ModelPrice, PriceTable
from bloge.llm.types import LlmRequest

PRICES = PriceTable(overrides={"cheap": ModelPrice(0.01, 0.01),
                               "pricey": ModelPrice(1000.0, 1000.0)})


class Failing:
    """A server on which the models of ``down`` fail with a 500 and the others answer 100
    prompt and 20 completion tokens, naming themselves."""

    def __init__(self, *down: str) -> None:
        self.down = set(down)
        self.asked: list[str] = []

    async def chat(self, request: LlmRequest) -> LlmResponse:
        self.asked.append(request.model)
        if request.model in self.down:
            raise ProviderError("server error", provider="openai", status_code=500)
        return LlmResponse("done", "stop", 100, 20, model=request.model)

    def stream_chat(self, request: LlmRequest) -> object:
        raise AssertionError("not streamed")


def agent(provider: object, models: list[str], usd: float) -> Agent:
    return Agent(provider, [], model=models, max_tokens=20, budget={"usd": usd},
                 budgets=BudgetPolicy(prices=PRICES))


def test_a_fallback_whose_price_could_pass_the_limit_is_not_called() -> None:
    provider = Failing("cheap")
    with pytest.raises(BudgetExceededError, match="fallback to model 'pricey'") as caught:
        agent(provider, ["cheap", "pricey"], 0.01).run_output("hi")
    assert provider.asked == ["cheap"]
    assert caught.value.limit_name == "usd"
    assert caught.value.needed > 0.01


def test_a_fallback_that_fits_answers_and_is_charged_at_its_own_price() -> None:
    provider = Failing("cheap")
    output = agent(provider, ["cheap", "pricey"], 1.0).run_output("hi")
    assert provider.asked == ["cheap", "pricey"]
    assert output.usage.cost_usd == pytest.approx((100 + 20) * 1000 / 1_000_000)


def test_a_cheap_model_with_a_pricey_fallback_answers_within_a_small_limit() -> None:
    provider = Failing()
    output = agent(provider, ["cheap", "pricey"], 0.01).run_output("hi")
    assert provider.asked == ["cheap"]
    assert output.usage.cost_usd == pytest.approx((100 + 20) * 0.01 / 1_000_000)


def test_a_usd_limit_with_an_unpriced_fallback_is_refused_at_the_start() -> None:
    provider = Failing()
    with pytest.raises(BlogeUsageError, match=r"no price for model 'unpriced'"):
        agent(provider, ["cheap", "unpriced"], 0.01).run_output("hi")
    assert provider.asked == []


def test_an_aliased_model_is_priced_as_the_model_it_is_sent_as() -> None:
    provider = ModelAliases(Failing(), {"cheap": "pricey"})
    prices = PriceTable(overrides={"cheap": ModelPrice(0.01, 0.01),
                                   "pricey": ModelPrice(1000.0, 1000.0)},
                        aliases={"cheap": "pricey"})
    refused = Agent(provider, [], model="cheap", max_tokens=20, budget={"usd": 0.01},
                    budgets=BudgetPolicy(prices=prices))
    with pytest.raises(BudgetExceededError):
        refused.run_output("hi")
    kept = Agent(provider, [], model="cheap", max_tokens=20, budget={"usd": 1.0},
                 budgets=BudgetPolicy(prices=prices))
    assert kept.run_output("hi").usage.cost_usd == pytest.approx(0.12)


def test_a_usd_limit_on_a_model_aliased_to_an_unpriced_one_is_refused_at_the_start() -> None:
    prices = PriceTable(aliases={"gpt-4o": "local-llama"})
    refused = Agent(ModelAliases(Failing(), {"gpt-4o": "local-llama"}), [], model="gpt-4o",
                    budget={"usd": 1.0}, budgets=BudgetPolicy(prices=prices))
    with pytest.raises(BlogeUsageError, match=r"no price for model 'local-llama' \(model "
                                              r"'gpt-4o' is sent as it"):
        refused.run_output("hi")


def test_an_answer_under_a_name_without_a_price_is_charged_as_the_model_asked() -> None:
    class Renaming(Failing):
        async def chat(self, request: LlmRequest) -> LlmResponse:
            return LlmResponse("done", "stop", 100, 20, model="llama3.1:8b-instruct")

    output = agent(Renaming(), ["pricey"], 1.0).run_output("hi")
    assert output.usage.cost_usd == pytest.approx(0.12)
