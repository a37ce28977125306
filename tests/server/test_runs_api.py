"""The runs API over a real server: runs answered whole and streamed as SSE, followed again
from where a client left off, read, cancelled, resumed; threads."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import (
    FunctionProvider,
    LlmMessage,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
)
from bloge.store import StoreWriter, open_store
from tests.server.conftest import AGENTS, Serve, lookup

LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))


def hanging(started: threading.Event) -> Callable[[LlmRequest], Awaitable[LlmResponse]]:
    """A model that never answers; ``started`` is set when it is asked."""

    async def model(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    return model


def sse_events(text: str) -> list[dict[str, Any]]:
    """The events of an SSE body: id, event, data (parsed)."""
    events = []
    for block in text.strip().split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = json.loads(value) if name == "data" else value
        if fields:
            events.append(fields)
    return events


def test_a_run_answers_with_its_output_and_ids(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found KB."))
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": "Find kb"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["content"], body["turns_used"]) == ("succeeded", "Found KB.", 2)
    assert body["run_id"]
    assert body["thread_id"]
    assert httpx.get(served.url(f"/runs/{body['run_id']}")).json()["status"] == "succeeded"


def test_a_thread_carries_the_conversation_across_runs(serve: Serve) -> None:
    provider = ScriptedProvider("Hello Ada.", "You are Ada.")
    served = serve(provider)
    for text in ("I am Ada.", "Who am I?"):
        response = httpx.post(served.url("/agents/helper/runs"),
                              json={"input": text, "thread_id": "chat-1"})
        assert response.status_code == 200, response.text
    seen = [m.content for m in provider.requests[1].messages]
    assert seen == ["Be brief.", "I am Ada.", "Hello Ada.", "Who am I?"]
    thread = httpx.get(served.url("/threads/chat-1")).json()
    assert [m["content"] for m in thread["messages"]][-1] == "You are Ada."


@pytest.mark.parametrize("path", ["/threads/customer/42", "/threads/customer%2F42"])
def test_a_thread_whose_id_has_a_slash_can_be_read(serve: Serve, path: str) -> None:
    served = serve(ScriptedProvider("Hello."))
    started = httpx.post(served.url("/agents/helper/runs"),
                         json={"input": "Hi", "thread_id": "customer/42"})
    assert started.status_code == 200, started.text
    thread = httpx.get(served.url(path))
    assert thread.status_code == 200, thread.text
    assert thread.json()["id"] == "customer/42"
    assert [m["content"] for m in thread.json()["messages"]][-1] == "Hello."


def test_a_streamed_run_sends_one_event_per_chunk_with_its_number(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found the word."))
    response = httpx.post(served.url("/agents/helper/runs"),
                          json={"input": "Find kb", "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "tool_start"
    assert {"tool_end", "token"} <= set(kinds)
    assert kinds[-1] == "done"
    numbers = [int(str(e["id"])) for e in events]
    assert numbers == sorted(numbers)
    assert events[-1]["data"]["content"] == "Found the word."


def test_stream_ids_are_the_runs_event_numbers_which_its_other_records_share(
        serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found the word."))
    events = sse_events(httpx.post(served.url("/agents/helper/runs"),
                                   json={"input": "Find kb", "stream": True}).text)
    recorded = asyncio.run(served.store.run_events(events[-1]["data"]["run_id"]))
    # Event 1 is the turn's start (a listener record, as `bloge runs show` lists it), not a
    # stream event: ids start above 1 and skip the model and tool call records, so that a
    # Last-Event-ID means the same event to every worker and to runs stored long ago.
    assert (recorded[0].seq, recorded[0].type) == (1, "on_agent_turn_started")
    shown = [(str(e.seq), e.type) for e in recorded
             if e.type in {"token", "tool_start", "tool_end", "done", "error"}]
    assert [(e["id"], e["event"]) for e in events] == shown


def test_accept_event_stream_streams_too(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": "Hi"},
                          headers={"Accept": "text/event-stream"})
    assert sse_events(response.text)[-1]["event"] == "done"


def test_a_stream_is_followed_again_from_the_last_event_id(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, "Found it."))
    events = sse_events(httpx.post(served.url("/agents/helper/runs"),
                                   json={"input": "Find kb", "stream": True}).text)
    run_id = events[-1]["data"]["run_id"]
    seen = events[1]["id"]
    again = httpx.get(served.url(f"/runs/{run_id}/stream"), headers={"Last-Event-ID": str(seen)})
    replayed = sse_events(again.text)
    assert [e["id"] for e in replayed] == [e["id"] for e in events[2:]]


def test_a_live_stream_is_joined_by_a_second_client(serve: Serve) -> None:
    started = threading.Event()
    release = threading.Event()

    async def slow(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.to_thread(release.wait)  # the test thread lets it answer
        return LlmResponse("At last.")

    served = serve(FunctionProvider(slow))

    async def scenario() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        async with httpx.AsyncClient(timeout=30) as client:
            first = asyncio.create_task(client.post(served.url("/agents/helper/runs"),
                                                    json={"input": "Wait", "stream": True}))
            await asyncio.to_thread(started.wait)
            (run,) = await served.store.list_runs()
            joined = asyncio.create_task(client.get(served.url(f"/runs/{run.id}/stream")))
            await asyncio.to_thread(release.set)
            return sse_events((await first).text), sse_events((await joined).text)

    first, joined = asyncio.run(scenario())
    assert [e["id"] for e in joined] == [e["id"] for e in first]


def test_a_run_out_of_turns_reports_it_and_resumes_with_a_higher_cap(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, LOOKUP, "Done now."))
    stopped = httpx.post(served.url("/agents/helper/runs"),
                         json={"input": "Loop", "max_turns": 1}).json()
    assert (stopped["status"], stopped["exit_reason"]) == ("failed", "max_turns")
    resumed = httpx.post(served.url(f"/runs/{stopped['id']}/resume"), json={"max_turns": 4})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["content"] == "Done now."


def test_a_streamed_resume_streams_only_what_the_resumed_run_does(serve: Serve) -> None:
    served = serve(ScriptedProvider(LOOKUP, LOOKUP, "Done now."))
    stopped = httpx.post(served.url("/agents/helper/runs"),
                         json={"input": "Loop", "max_turns": 1}).json()
    assert stopped["status"] == "failed"
    resumed = httpx.post(served.url(f"/runs/{stopped['id']}/resume"),
                         json={"max_turns": 4, "stream": True})
    assert resumed.status_code == 200, resumed.text
    events = sse_events(resumed.text)
    # Not the earlier attempt's events (its error among them): a client that stops at an
    # error event would never see the answer.
    assert [e["event"] for e in events][-1] == "done"
    assert "error" not in [e["event"] for e in events]
    assert int(events[0]["id"]) > stopped["events"]


def test_cancelling_a_running_run_stops_it(serve: Serve) -> None:
    started = threading.Event()
    served = serve(FunctionProvider(hanging(started)))

    async def scenario() -> dict[str, object]:
        async with httpx.AsyncClient(timeout=30) as client:
            run = asyncio.create_task(client.post(served.url("/agents/helper/runs"),
                                                  json={"input": "Hang"}))
            await asyncio.to_thread(started.wait)
            (running,) = await served.store.list_runs()
            cancelled = await client.post(served.url(f"/runs/{running.id}/cancel"))
            assert cancelled.status_code in (200, 202)
            response = await run
            return response.json()

    assert asyncio.run(scenario())["status"] == "cancelled"


def test_cancelling_a_resumed_run_stops_it(serve: Serve) -> None:
    started = threading.Event()
    hang = hanging(started)

    async def loop_then_hang(request: LlmRequest) -> LlmResponse:
        if not any(m.role == "tool" for m in request.messages):
            return LOOKUP
        return await hang(request)

    served = serve(FunctionProvider(loop_then_hang))

    async def scenario() -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as client:
            stopped = (await client.post(served.url("/agents/helper/runs"),
                                         json={"input": "Loop", "max_turns": 1})).json()
            resumed = asyncio.create_task(client.post(
                served.url(f"/runs/{stopped['id']}/resume"), json={"max_turns": 4}))
            await asyncio.to_thread(started.wait)
            cancelled = await client.post(served.url(f"/runs/{stopped['id']}/cancel"))
            assert cancelled.status_code in (200, 202)
            return await resumed

    response = asyncio.run(scenario())
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "cancelled"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_resuming_a_running_run_is_refused_and_leaves_it_cancellable(
        serve: Serve, stream: bool) -> None:
    started = threading.Event()
    served = serve(FunctionProvider(hanging(started)))
    with httpx.stream("POST", served.url("/agents/helper/runs"),
                      json={"input": "Hang", "stream": True}, timeout=30) as response:
        run_id = response.headers["bloge-run-id"]
        started.wait()
        refused = httpx.post(served.url(f"/runs/{run_id}/resume"), json={"stream": stream})
        # before: the refused resume took the run's place here, so the cancel below missed
        # it (202, the run went on) and the first stream was ended without a last event
        cancelled = httpx.post(served.url(f"/runs/{run_id}/cancel"))
        events = sse_events(response.read().decode())
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "run_running")
    assert f"POST /runs/{run_id}/cancel" in refused.json()["error"]["message"]
    assert cancelled.status_code in (200, 202)
    assert httpx.get(served.url(f"/runs/{run_id}")).json()["status"] == "cancelled"
    assert events[-1]["event"] == "error"
    assert events[-1]["data"]["exit_reason"] == "cancelled"


def test_a_cancel_of_a_run_another_worker_runs_answers_with_the_stopped_run(
        serve: Serve, tmp_path: Path) -> None:
    """The other worker hears the cancel within a second, not at its lease's next renewal
    (here in 20 minutes), and the cancel answers with the run's end: 200 ``cancelled``."""
    served = serve(ScriptedProvider(), lease=3600)
    started = threading.Event()
    registry = (OperatorRegistry.builder()
                .register("llmChat", LlmChatOperator(FunctionProvider(hanging(started))))
                .register("Lookup", lookup).build())
    (helper,) = [d for d in AgentDslCompiler(registry).compile_all(AGENTS) if d.id == "helper"]

    async def scenario() -> httpx.Response:
        # The server's own store file, used by a worker of its own.
        elsewhere = open_store(f"sqlite:///{tmp_path / 'bloge-0.db'}", lease=3600)
        run = asyncio.create_task(AgentLoopOperator("helper", helper, registry,
                                                    store=elsewhere).aexecute("Hang"))
        await asyncio.to_thread(started.wait)
        (running,) = await elsewhere.list_runs()
        async with httpx.AsyncClient(timeout=30) as client:
            cancelled = await client.post(served.url(f"/runs/{running.id}/cancel"))
        run.cancel()  # a run the cancel did not stop (before: it went on) is stopped here
        with pytest.raises(asyncio.CancelledError):
            await run
        await elsewhere.aclose()
        return cancelled

    cancelled = asyncio.run(scenario())
    assert cancelled.status_code == 200, cancelled.text
    assert (cancelled.json()["status"], cancelled.json()["exit_reason"]) == ("cancelled",
                                                                             "cancelled")


def test_rejoining_the_stream_of_a_run_whose_worker_died_ends_at_once_saying_how_to_resume(
        serve: Serve) -> None:
    served = serve(ScriptedProvider())
    # A run another worker started, then died running: its lease ran out long ago.
    asyncio.run(StoreWriter(served.store).start_run(run_id="dead", thread_id="t", agent_id="helper",
                                       input=(LlmMessage.user("Hi"),), metadata=None,
                                       worker="elsewhere:1"))
    served.store.clock = lambda: time.time() + 3600
    response = httpx.get(served.url("/runs/dead/stream"), headers={"Last-Event-ID": "7"},
                         timeout=30)
    assert response.status_code == 200
    (ended,) = sse_events(response.text)
    assert ended["event"] == "error"
    assert "id" not in ended  # the client's Last-Event-ID stays where it was
    assert ended["data"]["exit_reason"] == "interrupted"
    assert "run dead was interrupted" in ended["data"]["error_message"]
    assert "POST /runs/dead/resume" in ended["data"]["error_message"]


def test_a_run_cancelled_through_the_store_answers_with_its_record(serve: Serve) -> None:
    started = threading.Event()
    served = serve(FunctionProvider(hanging(started)), lease=0.3)  # renewed every 0.1 s

    async def scenario() -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as client:
            run = asyncio.create_task(client.post(served.url("/agents/helper/runs"),
                                                  json={"input": "Hang"}))
            await asyncio.to_thread(started.wait)
            (running,) = await served.store.list_runs()
            # What another worker's POST /runs/{id}/cancel and bloge runs cancel do: the run
            # stops when its worker next renews its lease.
            await served.store.cancel_run(running.id)
            return await run

    response = asyncio.run(scenario())
    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["exit_reason"]) == ("cancelled",
                                                                           "cancelled")


@pytest.mark.parametrize(("body", "param"), [
    (b"{not json", None), (b'{"input": 3}', "input"), (b'{"input": "x", "max_turns": 0}',
                                                       "max_turns"),
    (b'{"input": "x", "colour": "red"}', "colour"),
    # JSON's types as they are: true is not 1, "yes" is not true
    (b'{"input": "x", "max_turns": true}', "max_turns"),
    (b'{"input": "x", "max_turns": "3"}', "max_turns"),
    (b'{"input": "x", "stream": "yes"}', "stream"),
    (b'{"input": ""}', "input"), (b'{"input": " \\n"}', "input")])
def test_a_bad_body_is_a_400_naming_the_field(serve: Serve, body: bytes, param: str | None) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helper/runs"), content=body,
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


@pytest.mark.parametrize("body", [b"\xff\xfe", b'{"input": "caf\xe9"}'])
def test_a_body_that_is_not_utf8_is_a_400_saying_so(serve: Serve, body: bytes) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helper/runs"), content=body,
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the request body is not UTF-8 text"


def test_a_body_with_a_lone_surrogate_escape_is_a_400_saying_why(serve: Serve) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helper/runs"), content=b'{"input": "\\ud800x"}',
                          headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    # before: only "the request body is not JSON", Python's parser taking the escape
    message = response.json()["error"]["message"]
    assert message.startswith("the request body is not JSON: ")
    assert "line 1 column" in message


@pytest.mark.parametrize(("value", "got"), [
    (3, "got a number"), ({"role": "user"}, "got an object"), (None, "got null"),
    (["hi"], "got a list holding a string")])
def test_an_input_of_the_wrong_kind_is_told_what_an_input_may_be(
        serve: Serve, value: object, got: str) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": value})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message.startswith("input: should be a string or a list of messages such as [{")
    assert message.endswith(got)


@pytest.mark.parametrize(("message", "problem"), [
    ({"role": "user"}, 'a user message needs "content"'),
    ({"role": "system"}, 'a system message needs "content"'),
    ({"role": "assistant"}, 'an assistant message needs "content" or "tool_calls"'),
    ({"role": "tool", "content": "42"}, 'a tool message needs "tool_call_id"'),
    ({"role": "assistant", "tool_calls": [{"id": "c1"}]}, "tool_calls[0] must be an object")])
def test_a_message_a_model_cannot_be_sent_is_a_400_naming_the_item(
        serve: Serve, message: dict[str, Any], problem: str) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helper/runs"),
                          json={"input": [{"role": "user", "content": "Hi"}, message]})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["param"], error["message"].startswith(f"input[1]: {problem}")) == (
        "input[1]", True)
    assert asyncio.run(served.store.list_runs()) == []


def test_a_resent_transcript_with_a_tool_round_is_run(serve: Serve) -> None:
    served = serve(ScriptedProvider("Done."))
    transcript = [{"role": "user", "content": "Find kb"},
                  {"role": "assistant", "tool_calls": [{"id": "c1", "name": "lookup"}]},
                  {"role": "tool", "tool_call_id": "c1", "content": '{"found": "KB"}'},
                  {"role": "user", "content": "Thanks"}]
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": transcript})
    assert (response.status_code, response.json()["content"]) == (200, "Done.")


def test_an_unknown_agent_is_a_404_with_a_suggestion(serve: Serve) -> None:
    served = serve(ScriptedProvider("never"))
    response = httpx.post(served.url("/agents/helpr/runs"), json={"input": "x"})
    assert response.status_code == 404
    assert "did you mean 'helper'?" in response.json()["error"]["message"]


def test_an_unknown_run_is_a_404(serve: Serve) -> None:
    served = serve(ScriptedProvider("never"))
    assert httpx.get(served.url("/runs/nope")).status_code == 404
    assert httpx.get(served.url("/runs/nope/stream")).status_code == 404
