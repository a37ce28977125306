"""Paused runs that can go on but that nothing else continues go on: the server continues
them by itself, as their owner — those whose waiting calls expired (a ``/v1`` client that left
never posts its tools' results) and those whose calls were all answered without continuing
them (``bloge approvals approve --no-continue``); runs with a call still waiting, or answered
just now (their answer's own continuation takes them back), stay paused."""

from __future__ import annotations

import pytest

from bloge import Agent
from bloge.agent import RunPaused
from bloge.core.context import OperatorContext, Principal
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall, ToolDefinition
from bloge.server import ServerConfig, create_app
from bloge.server.stalled import continue_stalled
from bloge.server.state import ServerState
from bloge.store import RunStatus, Store, decide_call
from tests.runtime.helpers import calls
from tests.server.conftest import served_app

ALICE = OperatorContext.root(principal=Principal("alice"))
WEATHER = ToolDefinition("get_weather", "The weather in a city")
sent: list[int] = []


def transfer(amount: int) -> str:
    """Send money."""
    sent.append(amount)
    return f"sent {amount}"


transfer.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


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
    assert await continue_stalled(state) == ["run-left"]
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
    assert await continue_stalled(state) == []
    assert (await store.get_run("run-waits")).status is RunStatus.AWAITING_TOOL_RESULTS


async def decided_run(store: Store) -> tuple[ServerState, str]:
    """A server's state, and a run of its whose one call was approved without continuing
    the run (as ``bloge approvals approve --no-continue`` does)."""
    sent.clear()
    payer = Agent(ScriptedProvider(calls(("transfer", {"amount": 500}, "a")), "sent it"),
                  [transfer], name="payer")
    state: ServerState = create_app([payer], store=store).app.state.bloge  # type: ignore[attr-defined]  # a Starlette app
    with pytest.raises(RunPaused) as paused:
        await state.agents.whole("payer").aexecute("pay", ALICE)
    run_id = paused.value.run_id or ""
    assert (await decide_call(store, run_id, "a", approve=True)).remaining == 0
    return state, run_id


async def test_a_run_whose_calls_were_all_decided_without_continuing_goes_on(
        store: Store) -> None:
    state, run_id = await decided_run(store)
    assert await continue_stalled(state, settled=0.0) == [run_id]
    await state.tasks.shutdown(30.0)  # the continued run's task, to its end
    run = await store.get_run(run_id)
    assert run.status is RunStatus.SUCCEEDED
    assert run.output is not None
    assert run.output["content"] == "sent it"
    assert sent == [500]


async def test_a_run_answered_just_now_is_left_to_its_answers_own_continuation(
        store: Store) -> None:
    state, run_id = await decided_run(store)
    assert await continue_stalled(state) == []
    assert (await store.get_run(run_id)).status is RunStatus.AWAITING_APPROVAL
