"""A ``summary(n)`` memory's summaries are model calls of the run: reserved against its
budget before they are made, sent with the ``max_tokens`` the run's own calls carry, and
priced; one that is not made leaves the messages it would have folded in the run's view."""

from __future__ import annotations

import json

import pytest

from bloge import Agent, AgentRunError, BudgetExceededError, ProviderError
from bloge.agent.memory.summary import SUMMARIZE_PROMPT
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.llm.prices import DEFAULT_PRICE_TABLE

SUMMARY = "Summary of the earlier conversation:\n"


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def helper(*lines: str) -> str:
    """An agent whose turn 2 goes on from a summary of its turn 1's question (its view keeps
    2 messages: the tool call and its result), with ``lines`` besides."""
    body = "".join(f"  {line}\n" for line in lines)
    return (f'agent helper {{\n  model = "gpt-4o"\n  memory = summary(2)\n{body}'
            "  tool lookup : lookup { }\n}\n")


ASKING = LlmResponse("", "tool_calls", 10, 5,
                     tool_calls=(ToolCall("c1", "lookup", json.dumps({"key": "k"})),))


def script() -> ScriptedProvider:
    """Turn 1 asks for ``lookup``; then the summary; then turn 2 answers."""
    return ScriptedProvider(ASKING, LlmResponse("they asked for k", "stop", 2_000, 20),
                            LlmResponse("done", "stop", 30, 5))


def is_summary(request: LlmRequest) -> bool:
    return request.messages[0].content == SUMMARIZE_PROMPT


def test_a_summary_is_priced_and_counted_as_a_model_call_of_the_run() -> None:
    provider = script()
    output = Agent.from_dsl(helper(), llm=provider, tools=[lookup]).run_output("what is k?")
    assert [is_summary(request) for request in provider.requests] == [False, True, False]
    assert output.checkpoint.conversation[0].content == SUMMARY + "they asked for k"
    price = DEFAULT_PRICE_TABLE.price("gpt-4o")
    assert output.usage.cost_usd == pytest.approx(
        price.cost(10, 5) + price.cost(2_000, 20) + price.cost(30, 5))
    assert (output.usage.llm_calls, output.usage.prompt_tokens) == (3, 2_040)
    assert output.turns_used == 2


@pytest.mark.parametrize(("lines", "max_tokens"), [
    ((), None),  # as the run's own calls: no limit, no max_tokens of its own
    (("max_tokens = 300",), 300),
    (("budget { usd = 5 }",), 4096),  # a money limit needs a cap: the default answer cap
])
def test_a_summary_carries_the_max_tokens_of_the_runs_own_calls(
        lines: tuple[str, ...], max_tokens: int | None) -> None:
    provider = script()
    Agent.from_dsl(helper(*lines), llm=provider, tools=[lookup]).run("what is k?")
    assert [request.max_tokens for request in provider.requests] == [max_tokens] * 3


def test_a_summary_the_budget_cannot_afford_is_never_made_and_folds_nothing() -> None:
    # Turn 1 reserves its prompt (7 tokens) and 300, and spends 15; the summary would
    # reserve its prompt (66) and 300 more.
    provider = script()
    agent = Agent.from_dsl(helper("max_tokens = 300", "budget { tokens = 350 }"),
                           llm=provider, tools=[lookup])
    with pytest.raises(BudgetExceededError) as caught:
        agent.run("what is k?")
    assert len(provider.requests) == 1
    error = caught.value
    assert (error.limit_name, error.used, error.step) == ("tokens", 15, "model call")
    # What the summary would have folded is still in the checkpoint a resume goes on from.
    assert [m.role for m in error.checkpoint.conversation] == ["user", "assistant", "tool"]
    assert error.checkpoint.conversation[0].content == "what is k?"


def test_a_failed_summary_folds_nothing() -> None:
    def answer(request: LlmRequest) -> LlmResponse:
        if is_summary(request):
            raise ProviderError("overloaded", provider="house", status_code=529)
        return ASKING

    agent = Agent.from_dsl(helper(), llm=FunctionProvider(answer), tools=[lookup])
    with pytest.raises(AgentRunError) as caught:
        agent.run("what is k?")
    assert [m.role for m in caught.value.checkpoint.conversation] == ["user", "assistant",
                                                                      "tool"]
