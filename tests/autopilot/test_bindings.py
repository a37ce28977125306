"""Knobs bound to live settings: an applied value takes effect without a restart."""

from __future__ import annotations

import httpx
import pytest

from bloge import AgentLoopOperator, ProviderError
from bloge.autopilot import Autopilot, Knob, KnobTier, bindings
from bloge.llm import (
    FunctionProvider,
    LlmMessage,
    LlmRequest,
    LlmResponse,
    OpenAIChatProvider,
    RetryPolicy,
)
from bloge.server.agents import ServedAgents
from bloge.server.tasks import RunTasks
from tests.autopilot.conftest import FakeClock
from tests.runtime.scenarios import support_builder, support_model, support_registry


def _bound(autopilot: Autopilot, name: str, live: bindings.LiveSetting, low: float,
           high: float, value: float) -> None:
    autopilot.register_knob(Knob(name, KnobTier.WHITELIST, low, high, value, binding=live))


async def test_a_new_temperature_reaches_the_next_turn_of_a_run_going_on(
        clock: FakeClock) -> None:
    autopilot = Autopilot(clock=clock)
    temperatures: list[float | None] = []

    def model(request: LlmRequest) -> LlmResponse:
        temperatures.append(request.temperature)
        if len(temperatures) == 1:
            autopilot.propose("temperature", 0.9)
        return support_model(request)

    registry, _ = support_registry(FunctionProvider(model))
    operator = AgentLoopOperator("support", support_builder(registry).build(), registry)
    live = bindings.agent_setting("customerSupport", "temperature")
    live.attach(bindings.retunes(operator, "temperature"))
    _bound(autopilot, "temperature", live, 0, 1, 0.2)
    await operator.aexecute("How do I reset my password?")
    assert temperatures == [0.2, 0.9]


async def test_a_new_tool_concurrency_applies_from_the_next_run(clock: FakeClock) -> None:
    registry, _ = support_registry()
    operator = AgentLoopOperator("support", support_builder(registry).build(), registry)
    live = bindings.agent_setting("customerSupport", "max_tool_concurrency")
    live.attach(bindings.retunes(operator, "max_tool_concurrency"))
    autopilot = Autopilot(clock=clock)
    _bound(autopilot, "concurrency", live, 1, 8, 2)
    autopilot.propose("concurrency", 5)
    assert operator.agent_def.max_tool_concurrency == 5
    assert "KB-RESET-001" in (await operator.aexecute("How do I reset my password?")).content
    assert live.setting == "bloge.agents.customerSupport.max-tool-concurrency"


def test_a_served_agent_is_retuned_and_a_requests_own_max_turns_still_wins(
        clock: FakeClock) -> None:
    registry, _ = support_registry()
    served = ServedAgents({"customerSupport": support_builder(registry).build()},
                          lambda d: AgentLoopOperator(d.id, d, registry))
    cached = served.whole("customerSupport")
    live = bindings.agent_setting("customerSupport", "max_turns")
    live.attach(bindings.retunes_served(served, "customerSupport", "max_turns"))
    autopilot = Autopilot(clock=clock)
    _bound(autopilot, "turns", live, 1, 20, 6)
    autopilot.propose("turns", 9)
    assert cached.agent_def.max_turns == 9
    assert served.whole("customerSupport").agent_def.max_turns == 9
    assert served.whole("customerSupport", max_turns=3).agent_def.max_turns == 3


async def test_a_provider_retries_as_the_knob_says_from_its_next_call(
        clock: FakeClock) -> None:
    attempts: list[httpx.Request] = []

    def overloaded(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(503, json={"error": {"message": "busy"}})

    async def no_wait(_: float) -> None:
        return None

    client = httpx.AsyncClient(transport=httpx.MockTransport(overloaded))
    provider = OpenAIChatProvider(base_url="https://api.test/v1", api_key="sk-test",
                                  http_client=client, retry=RetryPolicy(max_attempts=4),
                                  sleep=no_wait)
    live = bindings.retry_setting("max_attempts")
    live.attach(bindings.retries(provider, "max_attempts"))
    autopilot = Autopilot(clock=clock)
    _bound(autopilot, "attempts", live, 1, 8, 4)
    autopilot.propose("attempts", 2)
    with pytest.raises(ProviderError):
        await provider.chat(LlmRequest("gpt-4o", (LlmMessage.user("hi"),)))
    assert len(attempts) == 2
    assert provider.retry.initial_backoff == RetryPolicy().initial_backoff
    await client.aclose()


def test_the_servers_run_limit_follows_the_knob(clock: FakeClock) -> None:
    tasks = RunTasks(64)
    live = bindings.run_limit_setting()
    autopilot = Autopilot(clock=clock)
    _bound(autopilot, "runs", live, 1, 128, 64)
    live.attach(bindings.limits(tasks))  # attached later, as the server is: current value
    autopilot.propose("runs", 32)
    assert tasks.limit == 32
