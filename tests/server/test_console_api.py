"""What the chat page's console reads, over HTTP on a real server: a key's threads (newest
first, searched by text), a thread's conversation with its tool calls masked, a run's
timeline as JSON and as a stream re-joined with ``Last-Event-ID``, and the calls waiting
for a decision — each scoped to the key that asks."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx

from bloge.llm import LlmMessage, LlmResponse, ScriptedProvider, ToolCall
from bloge.server.principals import key_principal
from bloge.store import EVAL_TAG, StoreWriter
from tests.server.conftest import Serve

ALICE, BOB, ADMIN = "k-alice", "k-bob", "k-admin"
#: A lookup whose arguments carry a secret the journal masks.
SECRET_LOOKUP = LlmResponse("", "tool_calls", tool_calls=(
    ToolCall("c1", "lookup", '{"q": "password=hunter2", "api_key": "hunter2"}'),))


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def run(served: Any, text: str, *, thread: str, key: str | None = None) -> dict[str, Any]:
    response = httpx.post(served.url("/agents/helper/runs"),
                          json={"input": text, "thread_id": thread},
                          headers=as_key(key) if key else {}, timeout=30)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_threads_are_listed_newest_first_with_their_first_message(serve: Serve) -> None:
    served = serve(ScriptedProvider("One.", "Two."))
    run(served, "first question", thread="t-1")
    run(served, "second question", thread="t-2")
    threads = httpx.get(served.url("/threads")).json()["threads"]
    assert [(t["id"], t["title"]) for t in threads] == [("t-2", "second question"),
                                                        ("t-1", "first question")]


def test_threads_are_searched_by_the_text_of_their_messages_in_any_case(serve: Serve) -> None:
    served = serve(ScriptedProvider("About Refunds.", "About passwords."))
    run(served, "refund please", thread="t-1")
    run(served, "reset my password", thread="t-2")
    found = httpx.get(served.url("/threads"), params={"q": "REFUND"}).json()["threads"]
    assert [t["id"] for t in found] == ["t-1"]
    assert httpx.get(served.url("/threads"), params={"q": "100%_"}).json()["threads"] == []


def test_the_threads_of_evals_are_listed_only_when_asked(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello."))
    run(served, "Hi", thread="t-real")
    asyncio.run(StoreWriter(served.store).start_run(
        run_id="graded", thread_id="t-eval", agent_id="helper", input=[LlmMessage.user("Hi")],
        metadata={EVAL_TAG: {"id": "e1", "case": "greet"}}, worker="eval"))
    listed = httpx.get(served.url("/threads")).json()["threads"]
    assert [t["id"] for t in listed] == ["t-real"]
    every = httpx.get(served.url("/threads"), params={"evals": "true"}).json()["threads"]
    assert [t["id"] for t in every] == ["t-eval", "t-real"]
    refused = httpx.get(served.url("/threads"), params={"evals": "yes"})
    assert (refused.status_code, refused.json()["error"]["param"]) == (400, "evals")


def test_another_key_never_sees_a_key_s_threads(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi Alice.", "Hi Bob."), api_keys=(ALICE, BOB),
                   admin_keys=(ADMIN,))
    run(served, "I am Alice", thread="alice-1", key=ALICE)
    run(served, "I am Bob", thread="bob-1", key=BOB)
    listed = httpx.get(served.url("/threads"), params={"q": "I am"}, headers=as_key(BOB))
    assert [t["id"] for t in listed.json()["threads"]] == ["bob-1"]
    foreign = httpx.get(served.url("/threads/alice-1/messages"), headers=as_key(BOB))
    assert foreign.status_code == 404
    every = httpx.get(served.url("/threads"), headers=as_key(ADMIN)).json()["threads"]
    assert {t["id"] for t in every} == {"alice-1", "bob-1"}


def test_a_thread_s_messages_mask_tool_arguments_and_results_as_the_journal_does(
        serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    run(served, "Find kb", thread="t-1")
    body = httpx.get(served.url("/threads/t-1/messages")).json()
    _system, _user, asked, answered, _said = body["messages"]
    assert asked["tool_calls"][0]["arguments"] == \
        '{"q":"password=[redacted]","api_key":"[redacted]"}'
    assert (answered["tool_call_id"], answered["content"]) == ("c1",
                                                               '{"found":"PASSWORD=[redacted]"}')
    assert "hunter2" not in json.dumps(body).lower()


def test_a_thread_s_runs_say_how_each_ended(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello."))
    answer = run(served, "Hi", thread="t-1")
    (summary,) = httpx.get(served.url("/threads/t-1/messages")).json()["runs"]
    assert summary["id"] == answer["run_id"]
    assert (summary["status"], summary["exit_reason"], summary["error"]) == ("succeeded",
                                                                            "stop", None)


def test_a_thread_id_with_slashes_reads_its_messages(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello."))
    run(served, "Hi", thread="customer/42")
    body = httpx.get(served.url("/threads/customer/42/messages")).json()
    assert body["thread"]["id"] == "customer/42"
    assert [m["content"] for m in body["messages"]] == ["Be brief.", "Hi", "Hello."]


def test_a_run_s_timeline_is_what_bloge_runs_show_prints(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    answer = run(served, "Find kb", thread="t-1")
    body = httpx.get(served.url(f"/runs/{answer['run_id']}/events")).json()
    labels = [entry["label"] for entry in body["events"]]
    assert labels == ["turn_started", "llm_called", "tool_dispatched", "tool_completed",
                      "turn_started", "llm_called", "loop_exited"]
    dispatched = body["events"][2]
    assert dispatched["detail"] == "lookup c1"
    assert dispatched["event"]["arguments_json"] == \
        '{"q":"password=[redacted]","api_key":"[redacted]"}'
    assert body["run"]["status"] == "succeeded"


def test_a_run_s_timeline_stream_resumes_after_last_event_id(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    run_id = run(served, "Find kb", thread="t-1")["run_id"]
    headers = {"Accept": "text/event-stream"}
    whole = httpx.get(served.url(f"/runs/{run_id}/events"), headers=headers).text
    ids = [int(n) for n in re.findall(r"^id: (\d+)$", whole, flags=re.MULTILINE)]
    assert re.findall(r"^event: (\w+)$", whole, flags=re.MULTILINE) == ["entry"] * 7 + ["end"]
    rest = httpx.get(served.url(f"/runs/{run_id}/events"),
                     headers={**headers, "Last-Event-ID": str(ids[3])}).text
    assert [int(n) for n in re.findall(r"^id: (\d+)$", rest, flags=re.MULTILINE)] == ids[4:]
    assert 'data: {"type": "done"}' in rest


def test_another_key_cannot_read_a_run_s_timeline(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hello."), api_keys=(ALICE, BOB))
    run_id = run(served, "Hi", thread="t-1", key=ALICE)["run_id"]
    assert httpx.get(served.url(f"/runs/{run_id}/events"),
                     headers=as_key(BOB)).status_code == 404


def test_a_bad_thread_limit_is_a_400_naming_it(serve: Serve) -> None:
    response = httpx.get(serve(ScriptedProvider()).url("/threads"), params={"limit": "0"})
    assert response.status_code == 400
    assert "limit must be a whole number from 1 to 200, got '0'" in response.text


def test_waiting_approvals_are_listed_for_their_run_s_key_only(serve: Serve) -> None:
    served = serve(ScriptedProvider(), api_keys=(ALICE, BOB), four_eyes=True)
    listed = httpx.get(served.url("/approvals"), headers=as_key(ALICE)).json()
    assert listed == {"approvals": [], "principal": key_principal(ALICE), "four_eyes": True}
