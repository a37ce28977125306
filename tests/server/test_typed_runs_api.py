"""A typed agent over the runs API and ``/v1``: the response and the stored run hold the
validated value under ``output``; a client's ``json_object`` keeps the agent's own schema."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from bloge import Agent
from bloge.llm import ScriptedProvider
from bloge.server import create_app
from bloge.store import open_store
from tests.server.conftest import V1Client
from tests.server.live_server import LiveServer


class Ticket(BaseModel):
    title: str
    priority: int


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LiveServer]:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    provider = ScriptedProvider('{"title": "Jam"}', '{"title": "Jam", "priority": 2}')
    agent = Agent(provider, model="m", name="triage", output_type=Ticket)
    with LiveServer(create_app(agents=[agent], store=store)) as server:
        yield server
    asyncio.run(store.aclose())


def test_the_runs_api_returns_and_stores_the_validated_value(served: LiveServer) -> None:
    response = httpx.post(served.url("/agents/triage/runs"), json={"input": "file it"},
                          timeout=30)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["output"] == {"title": "Jam", "priority": 2}
    assert body["turns_used"] == 2  # one repair
    record = httpx.get(served.url(f"/runs/{body['run_id']}"), timeout=30).json()
    assert record["output"]["output"] == {"title": "Jam", "priority": 2}


def test_json_object_on_v1_keeps_the_agents_own_schema(served: LiveServer,
                                                       v1_client: V1Client) -> None:
    client = v1_client(served.url())
    completion = client.chat.completions.create(
        model="triage", messages=[{"role": "user", "content": "file it"}],
        response_format={"type": "json_object"})
    # the first answer, an object without priority, was repaired against the agent's schema
    assert json.loads(completion.choices[0].message.content or "") == {
        "title": "Jam", "priority": 2}
