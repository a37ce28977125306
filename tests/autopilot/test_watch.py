"""Error rates counted from real runs' callbacks drive the error-rate loop: a failing tool
lowers an agent's tool concurrency, and a bake that goes badly rolls the change back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge import (
    AgentBuilder,
    AgentLoopOperator,
    LlmChatOperator,
    LoopExitedPayload,
    OperatorRegistry,
    ToolCompletedPayload,
)
from bloge.autopilot import Applied, Autopilot, Knob, KnobTier, bindings
from bloge.autopilot.rates import ErrorRates, ErrorRateWatch
from bloge.llm import ScriptedProvider, tool_call_response
from tests.autopilot.conftest import FakeClock


class Flaky:
    """A tool that fails while ``failing`` is set."""

    def __init__(self) -> None:
        self.failing = True

    def execute(self, input: Mapping[str, Any], ctx: object = None) -> str:
        if self.failing:
            raise ValueError("the backend is down")
        return "ok"


def _agent(tool: Flaky, rates: ErrorRates, runs: int) -> tuple[AgentLoopOperator,
                                                                 ScriptedProvider]:
    provider = ScriptedProvider()
    for _ in range(runs):
        provider.add(tool_call_response("check", "{}"), "done")
    registry = OperatorRegistry({"Flaky": tool, "llmChat": LlmChatOperator(provider)})
    operator = (AgentBuilder.create("svc", registry=registry).model("m")
                .max_tool_concurrency(8).tool("check", "Flaky", description="check")
                .to_operator("svc", listeners=[rates]))
    assert isinstance(operator, AgentLoopOperator)
    return operator, provider


async def _runs(operator: AgentLoopOperator, count: int) -> None:
    for _ in range(count):
        await operator.aexecute("check it")


def test_the_rates_count_failed_tool_calls_and_runs_over_the_window(clock: FakeClock) -> None:
    rates = ErrorRates(window=60, clock=clock)
    assert rates.rate("tool-errors") == (0.0, 0)

    for success in (False, True, True, True):
        rates.on_agent_tool_completed(None, ToolCompletedPayload(1, "c", "t", success, 1.0, ""))  # type: ignore[arg-type]  # no context needed
    rates.on_agent_loop_exited(None, LoopExitedPayload(1, 1, 1, 1.0, "error"))  # type: ignore[arg-type]  # no context needed
    assert rates.rate("tool-errors") == (0.25, 4)
    assert rates.rate("run-errors") == (1.0, 1)
    clock.advance(61)
    assert rates.rate("tool-errors") == (0.0, 0)


async def test_a_failing_tool_lowers_the_concurrency_and_a_worse_bake_restores_it(
        clock: FakeClock) -> None:
    rates = ErrorRates(window=300, clock=clock)
    tool = Flaky()
    operator, _ = _agent(tool, rates, runs=40)
    autopilot = Autopilot(clock=clock, hold=30)
    live = bindings.agent_setting("svc", "max_tool_concurrency")
    live.attach(bindings.retunes(operator, "max_tool_concurrency"))
    autopilot.register_knob(Knob("svcConcurrency", KnobTier.WHITELIST, 1, 8, 8, max_step=4,
                                 bake=120, binding=live))
    watch = ErrorRateWatch(autopilot, rates, "svcConcurrency", threshold=0.3, window=300,
                           min_samples=5)

    await _runs(operator, 4)
    assert await watch.tick() is None  # too few samples
    await _runs(operator, 4)
    assert await watch.tick() is None  # past the threshold, the hold begins
    clock.advance(30)
    assert await watch.tick() == Applied("svcConcurrency", 4.0, previous=8.0)
    assert operator.agent_def.max_tool_concurrency == 4

    tool.failing = False
    await _runs(operator, 8)  # the change helps: half the calls in the window fail now
    clock.advance(10)
    assert await watch.tick() is None  # better during the bake: kept
    assert operator.agent_def.max_tool_concurrency == 4


async def test_a_bake_that_gets_worse_rolls_back_and_audits_it(clock: FakeClock) -> None:
    rates = ErrorRates(window=300, clock=clock)
    tool = Flaky()
    tool.failing = False
    operator, _ = _agent(tool, rates, runs=40)
    autopilot = Autopilot(clock=clock, hold=0)
    live = bindings.agent_setting("svc", "max_tool_concurrency")
    live.attach(bindings.retunes(operator, "max_tool_concurrency"))
    autopilot.register_knob(Knob("svcConcurrency", KnobTier.WHITELIST, 1, 8, 8, max_step=4,
                                 bake=120, binding=live))
    watch = ErrorRateWatch(autopilot, rates, "svcConcurrency", threshold=0.3, min_samples=5)
    tool.failing = True
    await _runs(operator, 3)
    tool.failing = False
    await _runs(operator, 5)  # 3 of 8 fail: 0.375
    assert await watch.tick() == Applied("svcConcurrency", 4.0, previous=8.0)
    tool.failing = True
    await _runs(operator, 4)  # 7 of 12 fail: worse during the bake
    clock.advance(60)
    assert await watch.tick() == Applied("svcConcurrency", 8.0, previous=4.0,
                                         rolled_back=True)
    assert operator.agent_def.max_tool_concurrency == 8
    assert "rolled_back svcConcurrency 4 -> 8" in autopilot.audit_log()[-1]
