"""Paused runs whose waiting calls expired go on: the server continues them by itself (a
``/v1`` client that left never posts its tools' results), as their owner; runs with a call
still waiting, or with none expired, stay paused."""

from __future__ import annotations

import pytest

from bloge.agent import RunPaused
from bloge.core.context import OperatorContext, Principal
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall, ToolDefinition
from bloge.server import ServerConfig
from bloge.server.expiry import continue_expired
from bloge.server.state import ServerState
from bloge.store import RunStatus, Store
from tests.server.conftest import served_app

ALICE = OperatorContext.root(principal=Principal("alice"))
WEATHER = ToolDefinition("get_weather", "The weather in a city")


def asking(call_id: str) -> LlmResponse:
    return LlmResponse(finish_reason="tool_calls", tool_calls=(
        ToolCall(call_id, "get_weather", '{"city": "Paris"}'),))


def state_of(store: Store, provider: ScriptedProvider) -> ServerState:
    guard = served_app(provider, store, ServerConfig())
    state: ServerState = guard.app.state.bloge  # type: ignore[attr-defined]  # a Starlette app
    return state


async def paused_run(state: ServerState, run_id: str) -> None:
    with pytest.raises(RunPaused):
        await state.agents.whole("helper").aexecute("weather?", ALICE, run_id=run_id,
                                                    tools=[WEATHER])


async def test_a_run_whose_client_never_answers_goes_on_once_its_call_expired(
        store: Store) -> None:
    store.tool_results_expiry = 0.0
    state = state_of(store, ScriptedProvider(asking("w1"), "no weather today"))
    await paused_run(state, "run-left")
    assert await continue_expired(state) == ["run-left"]
    await state.tasks.shutdown(30.0)  # the continued run's task, to its end
    run = await store.get_run("run-left")
    assert run.status is RunStatus.SUCCEEDED
    assert run.output is not None
    assert run.output["content"] == "no weather today"
    events = [event.type for event in await store.run_events("run-left")]
    assert events.index("tool_results_expired") < events.index("done")


async def test_a_run_whose_call_still_waits_stays_paused(store: Store) -> None:
    store.tool_results_expiry = 3600.0
    state = state_of(store, ScriptedProvider(asking("w1"), "never asked"))
    await paused_run(state, "run-waits")
    assert await continue_expired(state) == []
    assert (await store.get_run("run-waits")).status is RunStatus.AWAITING_TOOL_RESULTS
