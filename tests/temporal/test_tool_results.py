"""Tools answered from outside on Temporal: a run whose call waits for a posted result (an
external tool, or a tool of the run's own such as a ``/v1`` client's) pauses its workflow as
``awaiting_tool_results`` (no worker held), and goes on once the result is posted through
the store — from Python, over HTTP, through ``/v1`` — or once the call expires unanswered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

import httpx
import openai
import pytest
from temporalio.client import Client
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bloge import RunPaused
from bloge.core.context import OperatorContext, Principal
from bloge.llm import ToolDefinition
from bloge.store import (
    ApprovalConflictError,
    RunStatus,
    Store,
    post_tool_results,
)
from bloge.temporal import AgentWorkflow, TemporalRunner, catalogue
from bloge.temporal.worker import PASSED_THROUGH
from tests.server.live_server import LiveServer
from tests.temporal.conftest import StoredAgents, streamed_kinds

pytestmark = pytest.mark.usefixtures("temporal_server")

T = TypeVar("T")
ALICE = OperatorContext.root(principal=Principal("alice"))


async def test_an_external_call_pauses_the_workflow_until_its_result_is_posted(
        worked: StoredAgents, store: Store) -> None:
    asker = worked.operator("asker")
    with pytest.raises(RunPaused) as caught:
        await asker.aexecute("ask which colour", ALICE, run_id="run-ask")
    paused = caught.value
    assert paused.status == "awaiting_tool_results"
    assert [(call.call_id, call.tool, call.kind) for call in paused.pending] == [
        ("e1", "ask_user", "external")]
    run = await store.get_run("run-ask")
    assert run.status is RunStatus.AWAITING_TOOL_RESULTS
    assert run.worker is None
    output = await asker.aresume_run("run-ask", ALICE, tool_results={"e1": "the blue one"})
    assert output.content == "answer: the blue one"
    assert (await store.get_run("run-ask")).status is RunStatus.SUCCEEDED
    events = [event.type for event in await store.run_events("run-ask")]
    assert events.index("tool_results_required") < events.index("tool_results_posted") \
        < events.index("done")
    with pytest.raises(ApprovalConflictError):  # the run has moved on
        await post_tool_results(store, "run-ask", {"e1": "again"})


async def test_a_run_that_waited_for_a_result_replays_deterministically(
        worked: StoredAgents, client: Client, task_queue: str) -> None:
    asker = worked.operator("asker")
    with pytest.raises(RunPaused):
        await asker.aexecute("ask which colour", ALICE, run_id="run-replayed")
    await asker.aresume_run("run-replayed", ALICE, tool_results={"e1": "red"})
    history = await client.get_workflow_handle("run-replayed").fetch_history()
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    replayer = Replayer(workflows=[AgentWorkflow], build_id="bloge-test",
                        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions))
    found = catalogue.find(task_queue, "asker")
    assert found is not None
    catalogue.file("replay-bloge-test", {"asker": found})  # the replayer's task queue
    try:
        await replayer.replay_workflow(history)  # a nondeterminism error fails the test
    finally:
        catalogue.withdraw("replay-bloge-test", ["asker"])


async def test_a_json_result_reaches_the_model_as_json(
        worked: StoredAgents, store: Store) -> None:
    asker = worked.operator("asker")
    with pytest.raises(RunPaused):
        await asker.aexecute("ask which number", ALICE, run_id="run-json")
    await post_tool_results(store, "run-json", {"e1": {"pick": 2}})
    output = await asker.aresume_run("run-json", ALICE)
    assert output.content == 'answer: {"pick":2}'


async def test_an_external_call_that_expires_tells_the_model_no_result_came(
        worked: StoredAgents, store: Store, client: Client, task_queue: str) -> None:
    # Expired as soon as it is requested: the workflow's timer answers it, and the run goes
    # on by itself.
    store.tool_results_expiry = 0.0
    output = await TemporalRunner(client, task_queue, store=store).run(
        "asker", "ask which colour", run_id="run-unanswered")
    assert output.content.startswith("answer: Error: no result came for the call of tool "
                                      "'ask_user'")
    events = [event.type for event in await store.run_events("run-unanswered")]
    assert "tool_results_expired" in events
    assert (await store.get_run("run-unanswered")).status is RunStatus.SUCCEEDED


async def test_a_run_s_own_tools_are_offered_kept_and_answered_on_temporal(
        worked: StoredAgents) -> None:
    reader = worked.operator("reader")
    with pytest.raises(RunPaused) as caught:
        await reader.aexecute("client asks", ALICE, run_id="run-own",
                              tools=[ToolDefinition("client_fn", "The client's")])
    assert [call.tool for call in caught.value.pending] == ["client_fn"]
    output = await reader.aresume_run("run-own", ALICE, tool_results={"e1": "done by client"})
    assert output.content == "answer: done by client"


async def test_results_posted_over_http_continue_the_workflow(
        worked: StoredAgents) -> None:
    with LiveServer(worked.app("asker")) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            started = await http.post(server.url("/agents/asker/runs"),
                                      json={"input": "ask which colour"})
            assert started.status_code == 202, started.text
            paused = started.json()
            assert paused["status"] == "awaiting_tool_results"
            run_id = paused["id"]
            posted = await http.post(server.url(f"/runs/{run_id}/tool-results"),
                                     json={"e1": "green"})
            assert posted.json()["continued"] is True
            kinds = await streamed_kinds(http, server.url(f"/runs/{run_id}/stream"),
                                         after=paused["events"])
            assert kinds[-1] == "done"
            ended = (await http.get(server.url(f"/runs/{run_id}"))).json()
    assert ended["status"] == "succeeded"
    assert ended["output"]["content"] == "answer: green"


async def test_a_v1_clients_tool_round_trip_runs_on_temporal(
        worked: StoredAgents) -> None:
    tool = {"type": "function", "function": {
        "name": "client_fn", "description": "The client's",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
    ask = [{"role": "user", "content": "client asks"}]
    with LiveServer(worked.app("reader")) as server, openai.OpenAI(base_url=server.url("/v1"), api_key="none",
                                                  max_retries=0, timeout=60) as sdk:
        first = await _in_thread(lambda: sdk.chat.completions.create(
            model="reader", messages=ask, tools=[tool]))
        assert first.choices[0].finish_reason == "tool_calls"
        [call] = first.choices[0].message.tool_calls or []
        assert call.function.name == "client_fn"
        answered = [*ask, first.choices[0].message.model_dump(exclude_none=True),
                    {"role": "tool", "tool_call_id": call.id, "content": "42"}]
        second = await _in_thread(lambda: sdk.chat.completions.create(
            model="reader", messages=answered, tools=[tool]))
    assert second.id == first.id
    assert second.choices[0].message.content == "answer: 42"


async def _in_thread(call: Callable[[], T]) -> T:
    """The sync SDK off the event loop the worker runs on."""
    return await asyncio.to_thread(call)
