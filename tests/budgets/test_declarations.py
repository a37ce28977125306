"""Where budgets are declared — the DSL, ``--budget``, the HTTP resume body, settings — and
the price table they are priced with."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge import BlogeUsageError, CompileError, DslError
from bloge.agent import AgentBuilder, AgentDslCompiler, Budget, BudgetPolicy, with_budget_limits
from bloge.agent.budget import parse_limits
from bloge.core.masking import mask_credentials
from bloge.llm.prices import DEFAULT_PRICES, ModelPrice, PriceTable
from bloge_config import BlogeSettings, SettingsError, load_settings
from bloge_container.budgets import budget_policy
from bloge_container.errors import ConfigurationError


def compiled(body: str):  # noqa: ANN201 -- an AgentDef
    return AgentDslCompiler().compile(f'agent a {{ model = "gpt-4o"\n{body}\n}}')


def problems(body: str) -> list[str]:
    with pytest.raises(DslError) as raised:
        compiled(body)
    return [str(error).splitlines()[0] for error in raised.value.errors]


def test_the_dsl_declares_a_run_budget_and_a_thread_budget() -> None:
    definition = compiled("budget { tokens = 50000, usd = 0.50, tool_calls = 40, "
                          "model_calls = 10, time = 30s }\nbudget thread { usd = 5 }")
    assert definition.budget == Budget(tokens=50000, usd=0.5, tool_calls=40, model_calls=10,
                                       time=30.0)
    assert definition.thread_budget == Budget(usd=5.0)


def test_a_misspelt_limit_is_an_error_at_its_position_with_a_suggestion() -> None:
    (problem,) = problems("budget { tool_call = 4 }")
    assert problem.endswith(":2:10: unknown budget limit 'tool_call'; did you mean 'tool_calls'?")


def test_every_bad_limit_is_reported_at_once() -> None:
    found = problems('budget { usd = -1, tokens = 2.5, time = "soon", usd = 1 }')
    assert [p.split(": ", 1)[1] for p in found] == [
        "usd must be at least 0, got -1", "tokens must be a whole number, got 2.5",
        "time must be a duration such as 30s, got 'soon'",
        "duplicate budget limit 'usd' (first at line 2, column 10)"]


def test_an_unknown_budget_scope_is_an_error() -> None:
    (problem,) = problems("budget team { usd = 1 }")
    assert "unknown budget scope 'team'" in problem


def test_a_thread_budget_has_no_time_limit_an_error_at_its_position() -> None:
    (problem,) = problems("budget thread { usd = 5, time = 1ms }")
    assert problem.endswith(":2:26: time limits the wall-clock time of one run: a thread's or "
                            "an API key's budget has none (set it in the run's budget)")


def test_a_thread_time_limit_is_refused_from_the_cli_python_and_a_resume_body() -> None:
    definition = AgentBuilder.create("a").model("m").build()
    with pytest.raises(BlogeUsageError, match=r"^--budget 'thread\.time=1ms': time limits"):
        with_budget_limits(definition, ["thread.time=1ms"], option="--budget")
    with pytest.raises(BlogeUsageError, match=r"thread\.time: time limits"):
        with_budget_limits(definition, {"thread": {"time": 1}})
    with pytest.raises(BlogeUsageError, match="thread_budget: time limits"):
        AgentBuilder.create("a").model("m").thread_budget(time=1).build()
    with pytest.raises(BlogeUsageError, match="per_key: time limits"):
        BudgetPolicy(per_key=Budget(time=1))


def test_a_budget_block_holds_only_bindings() -> None:
    (problem,) = problems("budget { inner { usd = 1 } }")
    assert "a budget block holds only <limit> = <value> bindings" in problem


def test_a_compile_error_is_a_compile_error() -> None:
    with pytest.raises(CompileError):
        compiled("budget { dollars = 1 }")


def test_budget_limits_parse_as_the_cli_gives_them() -> None:
    assert parse_limits(["usd=1.00", "tool-calls=40", "time=5m", "thread.tokens=8000"]) == {
        "budget": {"usd": 1.0, "tool_calls": 40, "time": 300.0},
        "thread_budget": {"tokens": 8000}}


@pytest.mark.parametrize(("text", "message"), [
    ("usd", "budget limit 'usd' is not <limit>=<value> or thread.<limit>=<value>"),
    ("team.usd=1", "budget limit 'team.usd=1' is not <limit>=<value>"),
    ("usdd=1", "unknown budget limit 'usdd' in 'usdd=1'; did you mean 'usd'?"),
    ("tokens=many", "budget limit tokens must be a number, got 'many'"),
    ("tokens=-5", "tokens must be at least 0, got -5"),
])
def test_a_bad_budget_limit_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(BlogeUsageError, match=message.replace("?", r"\?").replace(".", r"\.")):
        parse_limits([text])


def test_a_bad_limit_given_from_python_is_named_as_a_limit_not_as_the_cli_option() -> None:
    definition = AgentBuilder.create("a").model("m").build()
    with pytest.raises(BlogeUsageError) as refused:
        with_budget_limits(definition, ["usd"])
    assert str(refused.value) == ("budget limit 'usd' is not <limit>=<value> or "
                                  "thread.<limit>=<value> (e.g. usd=1.00)")
    with pytest.raises(BlogeUsageError) as refused:
        with_budget_limits(definition, ["usd"], option="--budget")
    assert str(refused.value) == ("--budget takes <limit>=<value> or thread.<limit>=<value> "
                                  "(e.g. usd=1.00), got 'usd'")


def test_raised_limits_keep_the_others() -> None:
    definition = AgentBuilder.create("a").model("m").budget(usd=0.5, tool_calls=4).build()
    raised = with_budget_limits(definition, {"usd": 1.0, "thread": {"tokens": 10}})
    assert raised.budget == Budget(usd=1.0, tool_calls=4)
    assert raised.thread_budget == Budget(tokens=10)
    assert with_budget_limits(definition, ["tool_calls=8"]).budget == Budget(usd=0.5,
                                                                            tool_calls=8)


def test_a_dated_model_is_priced_as_its_family_and_a_provider_prefix_is_dropped() -> None:
    table = PriceTable()
    assert table.get("gpt-4o-2024-08-06") == DEFAULT_PRICES["gpt-4o"]
    assert table.get("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    assert table.get("openai/gpt-4.1-mini") == DEFAULT_PRICES["gpt-4.1-mini"]
    assert table.get("claude-sonnet-4-20250514") == DEFAULT_PRICES["claude-sonnet-4"]
    assert table.get("llama3") is None


def test_a_model_without_a_price_is_named_in_words_the_credential_mask_leaves_whole() -> None:
    # A run's recorded error is masked: "tokens: input" once read as a credential.
    with pytest.raises(BlogeUsageError) as refused:
        PriceTable().price("house-model")
    assert "no price for model 'house-model'" in str(refused.value)
    assert mask_credentials(str(refused.value)) == str(refused.value)


def test_cache_reads_and_writes_are_priced_at_their_rates() -> None:
    price = DEFAULT_PRICES["claude-sonnet-4"]
    # 1M prompt tokens of which 600k read from the cache and 100k written to it.
    assert price.cost(1_000_000, 0, cache_read=600_000, cache_write=100_000) == pytest.approx(
        0.3 * 3.00 + 0.6 * 0.30 + 0.1 * 3.75)


def test_a_price_must_be_a_number_of_dollars() -> None:
    with pytest.raises(BlogeUsageError, match="input must be a number of dollars"):
        ModelPrice(-1.0, 2.0)


def test_settings_give_defaults_key_limits_and_prices() -> None:
    settings = BlogeSettings.model_validate({"budgets": {
        "run": {"usd": 1.0, "time": "5m"}, "per-key": {"tokens": 1000},
        "keys": {"key:abc": {"usd": 20}}, "period": "hour", "answer-cap": 512,
        "prices": {"house-model": {"input": 1.0, "output": 2.0}}}})
    policy = budget_policy(settings)
    assert policy.run == Budget(usd=1.0, time=300.0)
    assert policy.thread is None
    assert policy.key_budget("key:abc") == Budget(usd=20.0)
    assert policy.key_budget("key:other") == Budget(tokens=1000)
    assert (policy.period, policy.answer_cap) == ("hour", 512)
    assert policy.prices.get("house-model") == ModelPrice(1.0, 2.0)
    assert policy.prices.get("gpt-4o") == DEFAULT_PRICES["gpt-4o"]


def test_the_settings_price_an_aliased_model_as_the_model_it_is_sent_as() -> None:
    settings = BlogeSettings.model_validate({
        "llm": {"model-aliases": {"gpt-4o": "local-llama"}},
        "budgets": {"prices": {"local-llama": {"input": 1.0, "output": 2.0}}}})
    assert budget_policy(settings).prices.get("gpt-4o") == ModelPrice(1.0, 2.0)


def test_a_thread_time_limit_in_the_settings_is_an_error_naming_the_key(
        tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(base_dir=tmp_path, environ={"BLOGE_BUDGETS__THREAD__TIME": "1ms"})
    assert str(refused.value).startswith(
        "environment variable BLOGE_BUDGETS__THREAD__TIME: bloge.budgets.thread.time = '1ms' "
        "is not valid: time limits the wall-clock time of one run")


def test_key_budgets_without_the_store_are_a_configuration_error() -> None:
    settings = BlogeSettings.model_validate({"store": {"enabled": False},
                                             "budgets": {"per-key": {"usd": 1}}})
    with pytest.raises(ConfigurationError, match="kept in the run store"):
        budget_policy(settings)
