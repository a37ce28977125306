"""Sub-agents on ``bloge serve``: a streamed run's SSE carries its sub-agents' events under
the call that runs them, and ``GET /runs/{id}`` names a run's parent and children — on a real
server on 127.0.0.1."""

from __future__ import annotations

import httpx

from bloge import Agent
from bloge.agent.caller_thread import SubAgentThread
from bloge.llm import ScriptedProvider, tool_call_response
from bloge.server import create_app
from bloge.store import Store
from tests.server.live_server import LiveServer
from tests.server.test_runs_api import sse_events


def lookup(q: str) -> str:
    """Look a word up."""
    return q.upper()


def team(store: Store, thread: SubAgentThread = "fresh") -> Agent:
    researcher = Agent(ScriptedProvider(tool_call_response("lookup", '{"q": "kb"}', call_id="in"),
                                        "KB found."),
                       [lookup], name="researcher", store=store)
    return Agent(ScriptedProvider(tool_call_response("researcher", '{"input": "find kb"}'),
                                  "Done."),
                 [researcher.as_tool(thread=thread)], name="triage", store=store)


def test_a_streamed_run_sends_its_sub_agents_events_nested_under_the_call(store: Store) -> None:
    with LiveServer(create_app(agents=[team(store)], store=store)) as server:
        response = httpx.post(server.url("/agents/triage/runs"),
                              json={"input": "Find kb", "stream": True}, timeout=30)
    events = sse_events(response.text)
    nested = [e["data"] for e in events if e["event"] == "subagent"]
    assert {n["call_id"] for n in nested} == {"call_1"}
    assert [n["event"] for n in nested][:2] == ["tool_start", "tool_end"]
    assert nested[0]["body"] == {"tool": "lookup", "call_id": "in", "turn": 1}
    assert "".join(n["body"]["text"] for n in nested if n["event"] == "token") == "KB found."
    assert nested[0]["run_id"]
    assert events[-1]["event"] == "done"


def test_a_runs_record_names_its_children_and_a_childs_its_parent(store: Store) -> None:
    with LiveServer(create_app(agents=[team(store)], store=store)) as server:
        body = httpx.post(server.url("/agents/triage/runs"), json={"input": "Find kb"},
                          timeout=30).json()
        parent = httpx.get(server.url(f"/runs/{body['run_id']}")).json()
        (child,) = parent["children"]
        assert (child["agent_id"], child["status"]) == ("researcher", "succeeded")
        record = httpx.get(server.url(f"/runs/{child['id']}")).json()
    assert parent["parent_run_id"] is None
    assert record["parent_run_id"] == body["run_id"]
    assert record["children"] == []


def test_a_threads_messages_name_the_run_of_a_sub_agent_on_its_callers_thread(
        store: Store) -> None:
    with LiveServer(create_app(agents=[team(store, thread="parent")], store=store)) as server:
        body = httpx.post(server.url("/agents/triage/runs"), json={"input": "Find kb"},
                          timeout=30).json()
        (child,) = httpx.get(server.url(f"/runs/{body['run_id']}")).json()["children"]
        page = httpx.get(server.url(f"/threads/{body['thread_id']}/messages")).json()
        thread = httpx.get(server.url(f"/threads/{body['thread_id']}")).json()
    by_run = [(m["run_id"], m["role"], m["content"]) for m in page["messages"]]
    assert [(role, content) for run, role, content in by_run if run == child["id"]] == [
        ("user", "find kb"), ("assistant", ""), ("tool", "KB"), ("assistant", "KB found.")]
    assert [(role, content) for run, role, content in by_run if run == body["run_id"]] == [
        ("user", "Find kb"), ("assistant", ""), ("tool", "KB found."), ("assistant", "Done.")]
    assert {(r["id"], r["agent_id"]) for r in page["runs"]} == {
        (body["run_id"], "triage"), (child["id"], "researcher")}
    assert [m["run_id"] for m in thread["messages"]] == [run for run, _, _ in by_run]
