"""A served agent that hands over, on a real server on 127.0.0.1: the served agent stays the
entry one, the run names the agent it went on with, and its stream shows the handoff."""

from __future__ import annotations

import json

import httpx

from bloge.server import create_app
from bloge.store import Store
from tests.handoffs.agents import billing, triage
from tests.server.conftest import V1Client
from tests.server.live_server import LiveServer


def served(store: Store) -> LiveServer:
    billing_agent, _ = billing()
    agent, _ = triage(handoffs=[billing_agent])
    return LiveServer(create_app(agents=[agent], store=store))


def test_v1_answers_with_the_agent_handed_over_to(store: Store, v1_client: V1Client) -> None:
    with served(store) as server:
        client = v1_client(server.url())
        assert [model.id for model in client.models.list()] == ["triage"]
        completion = client.chat.completions.create(
            model="triage", messages=[{"role": "user", "content": "Refund A1"}])
    assert completion.choices[0].message.content == "Refunded A1."


def test_the_run_record_names_its_agent_and_the_one_it_went_on_with(store: Store) -> None:
    with served(store) as server:
        body = httpx.post(server.url("/agents/triage/runs"), json={"input": "Refund A1"}).json()
        assert body["content"] == "Refunded A1."
        run = httpx.get(server.url(f"/runs/{body['run_id']}")).json()
    assert (run["agent_id"], run["current_agent_id"]) == ("triage", "billing")


def test_a_streamed_run_sends_the_handoff_event(store: Store) -> None:
    with served(store) as server:
        response = httpx.post(server.url("/agents/triage/runs"),
                              json={"input": "Refund A1", "stream": True})
    frames = [block for block in response.text.split("\n\n") if "event: " in block]
    kinds = [line.removeprefix("event: ") for block in frames for line in block.split("\n")
             if line.startswith("event: ")]
    assert kinds[0] == "handoff"
    assert kinds[-1] == "done"
    data = next(line.removeprefix("data: ") for line in frames[0].split("\n")
                if line.startswith("data: "))
    assert json.loads(data) == {"from_agent": "triage", "to_agent": "billing",
                                "reason": "a refund", "turn": 1}
