"""The autopilot's approval API on a real server: API keys are principals, nobody approves
their own proposal, an approval applies the change to what the server runs."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from bloge import AgentDef, AgentDslCompiler, LlmChatOperator, OperatorRegistry, agent_operator
from bloge.autopilot import Autopilot, Knob, KnobTier, Proposed, bindings
from bloge.autopilot.tools import ProposeKnobChangeOperator
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.server import ServedAgents, ServerConfig, autopilot_api, create_app
from bloge.server.agents import AgentOperator
from bloge.store import Store, open_store
from tests.server.conftest import AGENTS, lookup
from tests.server.live_server import LiveServer

KEYS = ("key-alice", "key-bob")


def _principal(key: str) -> str:
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class Pilot:
    server: LiveServer
    agents: ServedAgents
    store_url: str

    def call(self, method: str, path: str, key: str | None = KEYS[0],
             json: object = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.request(method, self.server.url(path), headers=headers, json=json,
                             timeout=10)


def _knobs(autopilot: Autopilot, live: bindings.LiveSetting | None = None) -> None:
    autopilot.register_knob(Knob("turns", KnobTier.DANGEROUS, 1, 10, 4, binding=live))
    autopilot.register_knob(Knob("cap", KnobTier.WHITELIST, 1, 8, 2))


@pytest.fixture
def pilot(tmp_path: Path) -> Iterator[Pilot]:
    yield from _started(tmp_path, api_keys=KEYS)


OPS_AGENT = """
agent ops {
  model = "gpt-4o"
  tool propose : proposeKnobChange {
    description = "Propose a knob change"
    input { name = tool_args.name  value = tool_args.value  reason = tool_args.reason }
  }
}
"""
#: The ops agent's model: it proposes turns = 8, then says so.
PROPOSING = (LlmResponse("", "tool_calls", tool_calls=(ToolCall(
    "c1", "propose", '{"name": "turns", "value": 8, "reason": "long questions"}'),)),
    "Proposed.")


def _started(tmp_path: Path, **config: object) -> Iterator[Pilot]:
    url = f"sqlite:///{tmp_path / 'bloge.db'}"
    store = open_store(url)
    autopilot = Autopilot(store=store)
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("proposeKnobChange", ProposeKnobChangeOperator(autopilot))
                .register("llmChat", LlmChatOperator(ScriptedProvider(*PROPOSING))).build())
    definitions = {d.id: d for d in AgentDslCompiler(registry).compile_all(AGENTS + OPS_AGENT)}

    def build(definition: AgentDef) -> AgentOperator:
        return agent_operator(definition.id, definition, registry, store=store)

    agents = ServedAgents(definitions, build, default="helper")
    live = bindings.agent_setting("helper", "max_turns")
    _knobs(autopilot, live)
    app = create_app(agents, store=store, config=ServerConfig(**config),  # type: ignore[arg-type]  # test keywords
                     autopilot=autopilot)
    live.attach(bindings.retunes_served(agents, "helper", "max_turns"))
    server = LiveServer(app).__enter__()
    yield Pilot(server, agents, url)
    server.stop()
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


def _propose_elsewhere(url: str, value: float, principal: str) -> str:
    async def propose() -> str:
        store: Store = open_store(url)
        autopilot = Autopilot(store=store)
        _knobs(autopilot)
        decision = await autopilot.apropose("turns", value, principal=principal)
        await store.aclose()
        assert isinstance(decision, Proposed)
        return decision.proposal_id

    return asyncio.run(propose())


def test_a_proposal_is_approved_by_another_key_and_applies(pilot: Pilot) -> None:
    proposed = pilot.call("POST", "/autopilot/knobs/turns/proposals",
                          json={"value": 8, "reason": "long questions"})
    assert proposed.status_code == 200, proposed.text
    assert proposed.json()["status"] == "pending human approval"
    proposal_id = proposed.json()["proposal_id"]
    listed = pilot.call("GET", "/autopilot/proposals", key=KEYS[1]).json()["proposals"]
    assert [(p["id"], p["proposer"]) for p in listed] == [(proposal_id, _principal(KEYS[0]))]
    own = pilot.call("POST", f"/autopilot/proposals/{proposal_id}/approve")
    assert own.status_code == 403
    assert own.json()["error"]["code"] == "self_approval"
    assert pilot.agents.definition("helper").max_turns == 4
    approved = pilot.call("POST", f"/autopilot/proposals/{proposal_id}/approve", key=KEYS[1])
    assert approved.status_code == 200, approved.text
    assert approved.json()["value"] == 8
    assert pilot.agents.definition("helper").max_turns == 8
    again = pilot.call("POST", f"/autopilot/proposals/{proposal_id}/approve", key=KEYS[1])
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "decided"


def test_a_proposer_cannot_approve_with_a_second_authorization_header(pilot: Pilot) -> None:
    # The guard once checked the last header and the autopilot took its principal from the
    # first: a made-up first key approved the proposal of the real second one.
    proposed = pilot.call("POST", "/autopilot/knobs/turns/proposals", json={"value": 8})
    proposal_id = proposed.json()["proposal_id"]
    doubled = httpx.post(pilot.server.url(f"/autopilot/proposals/{proposal_id}/approve"),
                         headers=[("Authorization", "Bearer made-up"),
                                  ("Authorization", f"Bearer {KEYS[0]}")], timeout=10)
    assert doubled.status_code == 400, doubled.text
    assert "more than one Authorization header" in doubled.json()["error"]["message"]
    assert pilot.agents.definition("helper").max_turns == 4
    listed = pilot.call("GET", "/autopilot/proposals", key=KEYS[1]).json()["proposals"]
    assert [p["status"] for p in listed] == ["pending"]


def test_a_proposal_an_agent_made_for_a_key_is_not_approved_with_that_key(pilot: Pilot) -> None:
    # Before, the ops agent's proposal was recorded as "agent"'s, and whoever asked the agent
    # to make it approved it with their own key.
    ran = pilot.call("POST", "/agents/ops/runs", json={"input": "More turns, please."})
    assert ran.json()["content"] == "Proposed.", ran.text
    [proposal] = pilot.call("GET", "/autopilot/proposals").json()["proposals"]
    assert proposal["proposer"] == f"{_principal(KEYS[0])} via agent"
    own = pilot.call("POST", f"/autopilot/proposals/{proposal['id']}/approve")
    assert own.status_code == 403, own.text
    assert own.json()["error"]["code"] == "self_approval"
    assert pilot.agents.definition("helper").max_turns == 4
    approved = pilot.call("POST", f"/autopilot/proposals/{proposal['id']}/approve", key=KEYS[1])
    assert approved.status_code == 200, approved.text
    assert pilot.agents.definition("helper").max_turns == 8


def test_a_proposal_made_by_another_process_is_listed_and_rejected(pilot: Pilot) -> None:
    proposal_id = _propose_elsewhere(pilot.store_url, 9, "user:ops")
    listed = pilot.call("GET", "/autopilot/proposals").json()["proposals"]
    assert [p["id"] for p in listed] == [proposal_id]
    rejected = pilot.call("POST", f"/autopilot/proposals/{proposal_id}/reject",
                          json={"reason": "too many"})
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["decision"] == "rejected"
    assert pilot.call("GET", "/autopilot/proposals").json()["proposals"] == []


def test_an_unknown_proposal_is_404(pilot: Pilot) -> None:
    missing = pilot.call("POST", "/autopilot/proposals/nosuch/approve")
    assert missing.status_code == 404
    assert "no pending proposal 'nosuch'" in missing.json()["error"]["message"]


def test_a_whitelisted_knob_changes_at_once_and_a_bad_value_is_a_400(pilot: Pilot) -> None:
    applied = pilot.call("POST", "/autopilot/knobs/cap/proposals", json={"value": 20})
    assert applied.json() == {"decision": "applied", "name": "cap", "value": 8.0,
                              "clamped_from": 20.0, "previous": 2.0, "proposal_id": None,
                              "rolled_back": False}
    bad = pilot.call("POST", "/autopilot/knobs/cap/proposals", json={"value": "lots"})
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "value"
    knobs = pilot.call("GET", "/autopilot/knobs").json()["knobs"]
    assert {k["name"]: k["value"] for k in knobs} == {"cap": 8.0, "turns": 4.0}


@pytest.mark.parametrize("value", [True, "3", None])
def test_a_value_that_is_not_a_json_number_is_a_400_and_changes_nothing(
        pilot: Pilot, value: object) -> None:
    refused = pilot.call("POST", "/autopilot/knobs/cap/proposals", json={"value": value})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["param"] == "value"
    knobs = pilot.call("GET", "/autopilot/knobs").json()["knobs"]
    assert {k["name"]: k["value"] for k in knobs} == {"cap": 2.0, "turns": 4.0}
    assert pilot.call("GET", "/autopilot/proposals").json()["proposals"] == []


def test_without_a_key_the_server_refuses(pilot: Pilot) -> None:
    assert pilot.call("GET", "/autopilot/proposals", key=None).status_code == 401


def test_a_server_without_api_keys_does_not_serve_approvals(tmp_path: Path) -> None:
    for started in _started(tmp_path):
        refused = started.call("GET", "/autopilot/proposals", key=None)
        assert refused.status_code == 403
        assert "need an API key" in refused.json()["error"]["message"]


async def test_while_serving_each_watch_ticks_on_its_interval() -> None:
    ticked = asyncio.Event()

    class Ticking:
        knob = "cap"
        interval = 0.001

        async def tick(self) -> None:
            ticked.set()

    app = SimpleNamespace(state=SimpleNamespace(autopilot=Autopilot()))
    async with autopilot_api.running(app, refresh_interval=0.001,
                                     watches=[Ticking()]):  # type: ignore[list-item]  # a stand-in watch
        await ticked.wait()
