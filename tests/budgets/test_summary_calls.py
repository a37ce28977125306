"""A ``summary(n)`` memory's summaries are model calls of the run: reserved against its
budget before they are made, sent with the ``max_tokens`` the run's own calls carry, and
priced; one that is not made leaves the messages it would have folded in the run's view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bloge import Agent, AgentRunError, BudgetExceededError, ProviderError, TurnStartedPayload
from bloge.agent import MemorySummarizedPayload
from bloge.agent.memory.summary import SUMMARIZE_PROMPT
from bloge.journal import render_timeline
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.llm.prices import DEFAULT_PRICE_TABLE
from bloge.server.metrics import Metrics
from bloge.store import open_store
from bloge.store.timeline import run_timeline

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


class Told:
    """The callbacks a run makes, by name, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def on_agent_turn_started(self, context: object, payload: TurnStartedPayload) -> None:
        self.calls.append(("turn", payload.turn_number))

    def on_agent_llm_called(self, context: object, payload: object) -> None:
        self.calls.append(("llm", payload))

    def on_agent_memory_summarized(self, context: object,
                                   payload: MemorySummarizedPayload) -> None:
        self.calls.append(("summary", payload))


def test_listeners_are_told_of_a_summary_before_the_turn_it_makes_room_for() -> None:
    told = Told()
    Agent.from_dsl(helper(), llm=script(), tools=[lookup], listeners=[told]).run("what is k?")
    assert [name for name, _ in told.calls] == ["turn", "llm", "summary", "turn", "llm"]
    summary = told.calls[2][1]
    assert isinstance(summary, MemorySummarizedPayload)
    assert (summary.turn_number, summary.model, summary.prompt_tokens,
            summary.completion_tokens, summary.finish_reason,
            summary.messages_summarized) == (2, "gpt-4o", 2_000, 20, "stop", 1)
    assert summary.latency_ms >= 0


async def test_a_summary_is_an_event_of_the_run_and_a_line_of_its_timeline(
        tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        agent = Agent.from_dsl(helper(), llm=script(), tools=[lookup], store=store)
        output = await agent.arun_output("what is k?")
        assert output.run_id is not None
        events = await store.run_events(output.run_id)
        assert [event.type for event in events
                if event.type in ("on_agent_llm_called", "on_agent_memory_summarized")] == [
            "on_agent_llm_called", "on_agent_memory_summarized", "on_agent_llm_called"]
        [line] = [line for line in render_timeline(run_timeline(output.run_id, events))
                  if "memory_summarized" in line]
        assert "gpt-4o summarized 1 messages: 2000+20 tokens" in line
    finally:
        await store.aclose()


async def test_metrics_count_a_summarys_tokens_and_price() -> None:
    metrics = Metrics()
    await Agent.from_dsl(helper(), llm=script(), tools=[lookup],
                         listeners=[metrics]).arun("what is k?")
    sample = metrics.registry.get_sample_value
    assert sample("bloge_tokens_total", {"agent": "helper", "kind": "prompt"}) == 2_040
    price = DEFAULT_PRICE_TABLE.price("gpt-4o")
    assert sample("bloge_cost_usd_total", {"agent": "helper", "model": "gpt-4o"}) == (
        pytest.approx(price.cost(10, 5) + price.cost(2_000, 20) + price.cost(30, 5)))
