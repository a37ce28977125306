"""Paused runs over HTTP, on a real server: the run waits as a run state, each call of a
batch is decided on its own, the last decision continues the run on the server, and its
stream can be re-joined. Four eyes and ownership with API keys; every decision audited."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bloge import Agent
from bloge.autopilot.ledger import AuditLedger
from bloge.llm import ScriptedProvider, ToolDefinition
from bloge.server import ServerConfig, create_app
from bloge.store import Store, open_store
from tests.runtime.helpers import calls
from tests.server.live_server import LiveServer

ALICE, BOB = "key-alice", "key-bob"
sent: list[int] = []


def transfer(amount: int) -> str:
    """Send money."""
    sent.append(amount)
    return f"sent {amount}"


transfer.requires_approval = "tool_args.amount > 100"  # type: ignore[attr-defined]  # the facade reads it


class Server:
    def __init__(self, server: LiveServer, store: Store) -> None:
        self.server = server
        self.store = store

    def url(self, path: str) -> str:
        return self.server.url(path)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[tuple[LiveServer, Store]] = []

    def start(*answers: Any, **config: Any) -> Server:
        sent.clear()
        store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
        agent = Agent(ScriptedProvider(*answers), [transfer, ToolDefinition("ask_user")],
                      name="payer")
        app = create_app([agent], store=store, config=ServerConfig(**config))
        server = LiveServer(app).__enter__()
        started.append((server, store))
        return Server(server, store)

    yield start
    for server, store in started:
        server.stop()
        closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
        closing.start()
        closing.join()


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def start_paused(server: Server, key: str | None = None) -> dict[str, Any]:
    response = httpx.post(server.url("/agents/payer/runs"), json={"input": "pay"},
                          headers=as_key(key) if key else {}, timeout=30)
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def streamed(server: Server, run_id: str, after: int = 0) -> list[tuple[str, Any]]:
    """The run's stream, re-joined after event ``after``, to its end."""
    events: list[tuple[str, Any]] = []
    with httpx.stream("GET", server.url(f"/runs/{run_id}/stream"),
                      headers={"Last-Event-ID": str(after)}, timeout=30) as response:
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[6:])))
    return events


def test_a_paused_run_shows_its_pending_calls_and_continues_after_the_last_decision(
        serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a"), ("transfer", {"amount": 900}, "b"),
                         ("transfer", {"amount": 5}, "c")), "done")
    paused = start_paused(server)
    assert paused["status"] == "awaiting_approval"
    assert [p["call_id"] for p in paused["pending_approvals"]] == ["a", "b"]
    assert sent == [5]
    run_id = paused["id"]
    shown = httpx.get(server.url(f"/runs/{run_id}")).json()
    assert [p["tool"] for p in shown["pending_approvals"]] == ["transfer", "transfer"]
    first = httpx.post(server.url(f"/runs/{run_id}/approvals/a"), json={"approve": True})
    assert first.json() == {"run_id": run_id, "call_id": "a", "approved": True,
                            "remaining": 1, "continued": False, "stream": None}
    last = httpx.post(server.url(f"/runs/{run_id}/approvals/b"),
                      json={"approve": False, "reason": "too much"})
    assert last.json()["continued"] is True
    events = streamed(server, run_id, after=paused["events"])
    assert events[-1][0] == "done"
    assert httpx.get(server.url(f"/runs/{run_id}")).json()["status"] == "succeeded"
    assert sent == [5, 500]


def test_the_stream_of_a_run_announces_each_approval_it_waits_for(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    kinds = [kind for kind, _ in streamed(server, paused["id"])]
    assert kinds[-2:] == ["approval_required", "paused"]


def test_the_stream_of_a_paused_run_rejoined_after_its_announcements_says_it_waits(
        serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    [(kind, said)] = streamed(server, paused["id"], after=paused["events"])
    assert kind == "paused"
    assert (said["status"], said["call_ids"]) == ("awaiting_approval", ["a"])
    assert f"POST /runs/{paused['id']}/approvals/{{call_id}}" in said["message"]


def test_the_timeline_stream_of_a_paused_run_ends_saying_it_waits(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    with httpx.stream("GET", server.url(f"/runs/{paused['id']}/events"), timeout=30,
                      headers={"Accept": "text/event-stream",
                               "Last-Event-ID": str(paused["events"])}) as response:
        lines = list(response.iter_lines())
    assert lines[0] == "event: end"
    ended = json.loads(lines[1].removeprefix("data: "))
    assert (ended["type"], ended["status"], ended["call_ids"]) == (
        "paused", "awaiting_approval", ["a"])


def test_the_stream_of_a_run_a_decision_continued_carries_its_chunks(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    decided = httpx.post(server.url(f"/runs/{paused['id']}/approvals/a"), json={"approve": True})
    assert decided.json()["continued"] is True
    kinds = [kind for kind, _ in streamed(server, paused["id"], after=paused["events"])]
    assert kinds == ["tool_start", "tool_end", "token", "done"]


def test_deciding_twice_with_a_stale_hash_or_after_the_run_moved_on_is_409(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    run_id, call = paused["id"], paused["pending_approvals"][0]
    stale = httpx.post(server.url(f"/runs/{run_id}/approvals/a"),
                       json={"approve": True, "hash": "0" * 64})
    assert stale.status_code == 409
    assert "stale" in stale.json()["error"]["message"]
    ok = httpx.post(server.url(f"/runs/{run_id}/approvals/a"),
                    json={"approve": True, "hash": call["hash"]})
    assert ok.status_code == 200
    streamed(server, run_id, after=paused["events"])
    again = httpx.post(server.url(f"/runs/{run_id}/approvals/a"), json={"approve": False})
    assert again.status_code == 409


def test_another_principal_s_run_is_404_and_four_eyes_refuses_the_starter(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done",
                   api_keys=(ALICE, BOB), four_eyes=True)
    paused = start_paused(server, ALICE)
    run_id = paused["id"]
    own = httpx.post(server.url(f"/runs/{run_id}/approvals/a"), json={"approve": True},
                     headers=as_key(ALICE))
    assert own.status_code == 403
    foreign = httpx.post(server.url(f"/runs/{run_id}/approvals/a"), json={"approve": True},
                         headers=as_key(BOB))
    assert foreign.status_code == 404


def test_every_decision_is_in_the_hash_chained_audit(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    httpx.post(server.url(f"/runs/{paused['id']}/approvals/a"),
               json={"approve": True, "reason": "ok by me"})
    streamed(server, paused["id"], after=paused["events"])
    ledger = AuditLedger(server.store)
    records = asyncio.run(_records(ledger))
    (record,) = records
    assert record.entry.knob == "tool:transfer"
    assert record.entry.proposal_id == f"{paused['id']}/a"
    assert paused["pending_approvals"][0]["hash"] in record.entry.reason
    assert asyncio.run(_verified(ledger))


def test_posted_tool_results_continue_an_external_call(serve: Any) -> None:
    server = serve(calls(("ask_user", {"q": "which?"}, "e")), "ok")
    paused = start_paused(server)
    assert paused["status"] == "awaiting_tool_results"
    posted = httpx.post(server.url(f"/runs/{paused['id']}/tool-results"),
                        json={"e": {"pick": 2}})
    assert posted.json()["continued"] is True
    assert streamed(server, paused["id"], after=paused["events"])[-1][0] == "done"


async def _records(ledger: AuditLedger) -> list[Any]:
    return await ledger.records()


async def _verified(ledger: AuditLedger) -> bool:
    return (await ledger.verify()).ok


def test_metrics_count_the_calls_waiting_and_how_long_decisions_took(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a"), ("transfer", {"amount": 700}, "b")),
                   "done")
    paused = start_paused(server)
    scraped = httpx.get(server.url("/metrics")).text
    assert 'bloge_pending_approvals{kind="approval"} 2' in scraped
    assert 'bloge_runs_total{agent="payer",outcome="paused"} 1.0' in scraped
    httpx.post(server.url(f"/runs/{paused['id']}/approvals/a"), json={"approve": True})
    scraped = httpx.get(server.url("/metrics")).text
    assert 'bloge_pending_approvals{kind="approval"} 1' in scraped
    assert 'bloge_approval_wait_seconds_count{kind="approval"} 1.0' in scraped


def test_a_streamed_run_ends_its_stream_announcing_the_approval(serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    with httpx.stream("POST", server.url("/agents/payer/runs"),
                      json={"input": "pay", "stream": True}, timeout=30) as response:
        run_id = response.headers["bloge-run-id"]
        kinds = [line[7:] for line in response.iter_lines() if line.startswith("event: ")]
    assert kinds[-2:] == ["approval_required", "paused"]
    shown = httpx.get(server.url(f"/runs/{run_id}")).json()
    assert shown["status"] == "awaiting_approval"


def test_a_usd_limit_on_a_model_without_a_price_is_a_400_and_the_run_waits_on(
        serve: Any) -> None:
    server = serve(calls(("transfer", {"amount": 500}, "a")), "done")
    paused = start_paused(server)
    run_id = paused["id"]
    for body in ({"budget": {"usd": 1}}, {"budget": {"usd": 1}, "stream": True}):
        refused = httpx.post(server.url(f"/runs/{run_id}/resume"), json=body, timeout=30)
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["message"].startswith(
            "budget.usd: no price for model 'default', so a usd budget cannot be kept")
        assert error["param"] == "budget"
    shown = httpx.get(server.url(f"/runs/{run_id}")).json()
    assert (shown["status"], shown["turns"]) == ("awaiting_approval", 1)
    assert shown["usage"] == paused["usage"]
    assert [p["state"] for p in shown["pending_approvals"]] == ["waiting"]
    approved = httpx.post(server.url(f"/runs/{run_id}/approvals/a"), json={"approve": True})
    assert approved.json()["continued"] is True
    assert streamed(server, run_id, after=paused["events"])[-1][0] == "done"
    assert sent == [500]
