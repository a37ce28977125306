"""A sub-agent's call that waits for approval, on a real ``bloge serve`` on 127.0.0.1: the
caller's run waits too and shows the call (``GET /runs/{id}``, its stream, ``GET
/approvals``); deciding it — by the caller's run or by the sub-agent's — continues the caller
on the server, which finishes with the sub-agent's answer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bloge import Agent, RunPaused, open_store
from bloge.llm import ScriptedProvider
from bloge.server import create_app
from bloge.server.stalled import continue_stalled
from bloge.store import RunStatus, Store
from tests.runtime.helpers import calls
from tests.server.live_server import LiveServer
from tests.server.test_approvals_api import streamed

ran: list[str] = []


def refund(amount: int) -> str:
    """Refund an amount."""
    ran.append(f"refund {amount}")
    return f"refunded {amount}"


refund.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


def lookup(q: str) -> str:
    """Look a word up."""
    ran.append(f"lookup {q}")
    return q.upper()


class Served:
    def __init__(self, server: LiveServer) -> None:
        self.server = server

    def url(self, path: str) -> str:
        return self.server.url(path)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    ran.clear()
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    with LiveServer(create_app(agents=[team(store)], store=store)) as server:
        yield Served(server)
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()


def team(store: Store) -> Agent:
    billing = Agent(ScriptedProvider(calls(("refund", {"amount": 10}, "r1")), "Refunded 10."),
                    [refund], name="billing", store=store)
    return Agent(ScriptedProvider(calls(("billing", {"input": "refund 10"}, "c1"),
                                        ("lookup", {"q": "kb"}, "c2")), "Refund done."),
                 [billing.as_tool(), lookup], name="triage", store=store)


def start_paused(served: Served) -> dict[str, Any]:
    response = httpx.post(served.url("/agents/triage/runs"), json={"input": "refund me"},
                          timeout=30)
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_callers_record_stream_and_inbox_show_the_sub_agents_call(served: Served) -> None:
    paused = start_paused(served)
    assert paused["status"] == "awaiting_approval"
    (call,) = paused["pending_approvals"]
    (child,) = httpx.get(served.url(f"/runs/{paused['id']}")).json()["children"]
    assert (call["call_id"], call["tool"], call["run_id"]) == ("r1", "refund", child["id"])
    assert child["status"] == "awaiting_approval"
    events = streamed(served, paused["id"])
    (waiting,) = [body for kind, body in events if kind == "subagent_paused"]
    assert (waiting["call_id"], waiting["run_id"]) == ("c1", child["id"])
    (required,) = [body for kind, body in events if kind == "approval_required"]
    assert (required["call_id"], required["subagent_run_id"]) == ("r1", child["id"])
    inbox = httpx.get(served.url("/approvals")).json()["approvals"]
    assert [(c["run_id"], c["call_id"]) for c in inbox] == [(child["id"], "r1")]


def test_deciding_by_the_callers_run_finishes_it_on_the_server(served: Served) -> None:
    paused = start_paused(served)
    decided = httpx.post(served.url(f"/runs/{paused['id']}/approvals/r1"),
                         json={"approve": True}).json()
    child_id = paused["pending_approvals"][0]["run_id"]
    assert decided == {"run_id": child_id, "call_id": "r1", "approved": True, "remaining": 0,
                       "continued": True, "stream": f"/runs/{paused['id']}/stream"}
    events = streamed(served, paused["id"], after=paused["events"])
    assert events[-1][0] == "done"
    parent = httpx.get(served.url(f"/runs/{paused['id']}")).json()
    assert (parent["status"], parent["output"]["content"]) == ("succeeded", "Refund done.")
    assert httpx.get(served.url(f"/runs/{child_id}")).json()["status"] == "succeeded"
    assert ran == ["lookup kb", "refund 10"]  # the round's lookup ran once


def test_deciding_by_the_sub_agents_run_continues_its_caller(served: Served) -> None:
    paused = start_paused(served)
    child_id = paused["pending_approvals"][0]["run_id"]
    decided = httpx.post(served.url(f"/runs/{child_id}/approvals/r1"),
                         json={"approve": False, "reason": "not today"}).json()
    assert decided["stream"] == f"/runs/{paused['id']}/stream"
    events = streamed(served, paused["id"], after=paused["events"])
    assert events[-1][0] == "done"
    assert httpx.get(served.url(f"/runs/{paused['id']}")).json()["status"] == "succeeded"
    assert ran == ["lookup kb"]  # denied: the refund never ran


async def test_a_sub_agents_expired_call_continues_its_caller(tmp_path: Path) -> None:
    ran.clear()
    store = open_store(f"sqlite:///{tmp_path / 'expired.db'}")
    store.approval_expiry = 0.0
    state = create_app(agents=[team(store)], store=store).app.state.bloge  # type: ignore[attr-defined]  # a Starlette app
    try:
        with pytest.raises(RunPaused) as paused:
            await state.agents.whole("triage").aexecute("refund me")
        caller = paused.value.run_id
        assert await continue_stalled(state) == [caller]  # the caller, not the sub-agent
        await state.tasks.shutdown(30.0)  # the continued run's task, to its end
        run = await store.get_run(caller or "")
        assert run.status is RunStatus.SUCCEEDED
        assert ran == ["lookup kb"]  # expired: denied, the refund never ran
    finally:
        await store.aclose()
