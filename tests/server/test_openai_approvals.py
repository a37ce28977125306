"""A ``/v1`` round that calls a client's tool beside one of the agent's that needs a person's
approval, through the official ``openai`` SDK against a real server on 127.0.0.1: the client
is told of its own call at once; its results wait for the decision (a 409 naming the calls to
decide), and once it is taken they continue the run to its answer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from bloge import Agent
from bloge.llm import ScriptedProvider
from bloge.server import create_app
from bloge.store import Store, open_store
from tests.runtime.helpers import calls
from tests.server.conftest import V1Client
from tests.server.live_server import LiveServer

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
ASK = [{"role": "user", "content": "Pay 5000 to Mixy2, and what is the weather in Paris?"}]
paid: list[int] = []


def pay(amount: int) -> str:
    """Pay someone."""
    paid.append(amount)
    return f"paid {amount}"


pay.requires_approval = "tool_args.amount > 100"  # type: ignore[attr-defined]  # the facade reads it


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server of the agent ``bank``, whose model pays 5000 and asks the client's
    ``get_weather`` in one round, then answers "done"."""
    paid.clear()
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    model = ScriptedProvider(calls(("get_weather", {"city": "Paris"}, "w1"),
                                   ("pay", {"amount": 5000}, "a1")), "done")
    live = LiveServer(create_app([Agent(model, [pay], name="bank")], store=store)).__enter__()
    yield live
    live.stop()
    _closed(store)


def _closed(store: Store) -> None:
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


def answered(completion: Any, result: str) -> list[dict[str, Any]]:
    """The request's messages with the completion's message and the result of its call."""
    [call] = completion.choices[0].message.tool_calls
    return [*ASK, completion.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": result}]


def status_of(server: LiveServer, run_id: str) -> str:
    status: str = httpx.get(server.url(f"/runs/{run_id}")).json()["status"]
    return status


def test_the_client_is_told_its_own_call_though_an_approval_waits_beside_it(
        server: LiveServer, v1_client: V1Client) -> None:
    sdk = v1_client(server.url())
    asked = sdk.chat.completions.create(model="bank", messages=ASK, tools=[WEATHER])
    assert asked.choices[0].finish_reason == "tool_calls"
    assert [c.function.name for c in asked.choices[0].message.tool_calls or []] == [
        "get_weather"]
    assert status_of(server, asked.id.removeprefix("chatcmpl-")) == "awaiting_approval"


def test_its_results_before_the_decision_are_a_409_naming_the_call_to_decide(
        server: LiveServer, v1_client: V1Client) -> None:
    sdk = v1_client(server.url())
    asked = sdk.chat.completions.create(model="bank", messages=ASK, tools=[WEATHER])
    run_id = asked.id.removeprefix("chatcmpl-")
    with pytest.raises(openai.ConflictError) as refused:
        sdk.chat.completions.create(model="bank", messages=answered(asked, "Sunny"),
                                    tools=[WEATHER])
    assert (f"run {run_id} waits for a person's approval of tool call(s) 'a1': decide each "
            f"with POST /runs/{run_id}/approvals/{{call_id}}, then send this request again"
            ) in refused.value.message
    assert paid == []


def test_once_decided_the_run_awaits_the_clients_results_which_continue_it(
        server: LiveServer, v1_client: V1Client) -> None:
    sdk = v1_client(server.url())
    asked = sdk.chat.completions.create(model="bank", messages=ASK, tools=[WEATHER])
    run_id = asked.id.removeprefix("chatcmpl-")
    decided = httpx.post(server.url(f"/runs/{run_id}/approvals/a1"), json={"approve": True})
    assert (decided.json()["remaining"], decided.json()["continued"]) == (1, False)
    assert status_of(server, run_id) == "awaiting_tool_results"
    answer = sdk.chat.completions.create(model="bank", messages=answered(asked, "Sunny"),
                                         tools=[WEATHER])
    assert (answer.id, answer.choices[0].message.content) == (asked.id, "done")
    assert paid == [5000]
    assert status_of(server, run_id) == "succeeded"
