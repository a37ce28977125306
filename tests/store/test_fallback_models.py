"""An agent's fallback models end to end: the model that answered is in the listener
callbacks, the run's events, the timeline ``bloge runs show`` prints and ``/metrics``."""

from __future__ import annotations

import pytest

from bloge import Agent, AgentBuilder, AgentDslCompiler, AgentRunError
from bloge.agent import AgentExecutionListener, LlmCalledPayload
from bloge.core import ProviderError
from bloge.journal import render_timeline
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse
from bloge.server.metrics import Metrics
from bloge.store import Store
from bloge.store.timeline import run_timeline


def overloaded_openai(request: LlmRequest) -> LlmResponse:
    if request.model == "gpt-4o":
        raise ProviderError("Overloaded", provider="openai", status_code=529)
    return LlmResponse("Hi from Claude", prompt_tokens=1200, completion_tokens=5,
                       model=request.model, cache_read_tokens=1000, cache_write_tokens=150)


class Calls(AgentExecutionListener):
    def __init__(self) -> None:
        self.payloads: list[LlmCalledPayload] = []

    def on_agent_llm_called(self, context: object, payload: LlmCalledPayload) -> None:
        self.payloads.append(payload)


async def test_the_callback_names_the_model_that_answered_and_the_cache() -> None:
    calls = Calls()
    agent = Agent(FunctionProvider(overloaded_openai), model=["gpt-4o", "claude-sonnet-4-5"],
                  listeners=[calls])
    assert await agent.arun("Hi") == "Hi from Claude"
    [called] = calls.payloads
    assert (called.model, called.fallback_from) == ("claude-sonnet-4-5", ("gpt-4o",))
    assert (called.cache_read_tokens, called.cache_write_tokens) == (1000, 150)


async def test_the_run_events_and_the_timeline_record_the_model_that_answered(
        store: Store) -> None:
    agent = Agent(FunctionProvider(overloaded_openai), model=["gpt-4o", "claude-sonnet-4-5"],
                  store=store)
    output = await agent.arun_output("Hi")
    assert output.run_id is not None
    events = await store.run_events(output.run_id)
    [called] = [event.body for event in events if event.type == "on_agent_llm_called"]
    assert (called["model"], list(called["fallback_from"])) == (
        "claude-sonnet-4-5", ["gpt-4o"])
    assert (called["cache_read_tokens"], called["cache_write_tokens"]) == (1000, 150)
    [line] = [line for line in render_timeline(run_timeline(output.run_id, events))
              if "llm_called" in line]
    assert ("claude-sonnet-4-5 (after gpt-4o failed): 1200+5 tokens (1000 cached, 150 written "
            "to cache)") in line


async def test_metrics_count_fallbacks_and_the_cache_hit_ratio() -> None:
    metrics = Metrics()
    agent = Agent(FunctionProvider(overloaded_openai), model=["gpt-4o", "claude-sonnet-4-5"],
                  name="support", listeners=[metrics])
    await agent.arun("Hi")
    sample = metrics.registry.get_sample_value
    assert sample("bloge_model_fallbacks_total",
                  {"agent": "support", "model": "claude-sonnet-4-5"}) == 1.0
    assert sample("bloge_prompt_cache_hit_ratio", {"agent": "support"}) == 1000 / 1200


def test_the_dsl_the_builder_and_the_agent_take_the_same_models() -> None:
    from_list = AgentDslCompiler().compile(
        'agent a { model = ["gpt-4o", "claude-sonnet-4-5"] }')
    from_keyword = AgentDslCompiler().compile(
        'agent a {\n model = "gpt-4o"\n fallback = ["claude-sonnet-4-5"]\n}')
    built = AgentBuilder.create("a").model("gpt-4o", "claude-sonnet-4-5").build()
    agent = Agent(FunctionProvider(overloaded_openai), model=["gpt-4o", "claude-sonnet-4-5"],
                  name="a").operator.agent_def
    for definition in (from_list, from_keyword, built, agent):
        assert (definition.model, definition.fallback) == ("gpt-4o", ("claude-sonnet-4-5",))


async def test_an_agent_without_fallbacks_fails_as_before() -> None:
    agent = Agent(FunctionProvider(overloaded_openai), model="gpt-4o")
    with pytest.raises(AgentRunError) as caught:
        await agent.arun("Hi")
    cause = caught.value.__cause__
    assert isinstance(cause, ProviderError)
    assert cause.status_code == 529
