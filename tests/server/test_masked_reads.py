"""What the runs API reads back from the store shows tool arguments and results masked as the
journal masks them — a run's record, a thread, a re-joined stream — while the request that
ran the run hears its answer whole."""

from __future__ import annotations

import json
from typing import Any

import httpx

from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from tests.server.conftest import Serve
from tests.server.test_runs_api import sse_events

#: A lookup whose arguments carry a secret the journal masks; the tool answers with the
#: query in upper case (``{"found": "PASSWORD=HUNTER2"}``).
SECRET_LOOKUP = LlmResponse("", "tool_calls", tool_calls=(
    ToolCall("c1", "lookup", '{"q": "password=hunter2", "api_key": "hunter2"}'),))
MASKED_ARGUMENTS = '{"q":"password=[redacted]","api_key":"[redacted]"}'
MASKED_RESULT = {"found": "PASSWORD=[redacted]"}


def run(served: Any, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(served.url("/agents/helper/runs"), json=body, timeout=30)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_run_s_record_masks_its_output_s_tool_results(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    answer = run(served, {"input": "Find kb"})
    record = httpx.get(served.url(f"/runs/{answer['run_id']}")).json()
    assert record["output"]["tool_results"] == {"c1": MASKED_RESULT}
    assert "hunter2" not in json.dumps(record).lower()


def test_the_run_s_own_caller_hears_its_tool_results_whole(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    answer = run(served, {"input": "Find kb"})
    assert answer["tool_results"] == {"c1": {"found": "PASSWORD=HUNTER2"}}


def test_a_run_s_record_masks_the_tool_round_of_its_input(serve: Serve) -> None:
    served = serve(ScriptedProvider("Done."))
    transcript = [{"role": "user", "content": "Find kb"},
                  {"role": "assistant", "tool_calls": [
                      {"id": "c1", "name": "lookup",
                       "arguments": '{"q": "password=hunter2", "api_key": "hunter2"}'}]},
                  {"role": "tool", "tool_call_id": "c1", "content": '{"token": "hunter2"}'},
                  {"role": "user", "content": "Thanks"}]
    answer = run(served, {"input": transcript})
    record = httpx.get(served.url(f"/runs/{answer['run_id']}")).json()
    _user, asked, answered, _thanks = record["input"]
    assert asked["tool_calls"][0]["arguments"] == MASKED_ARGUMENTS
    assert answered["content"] == '{"token":"[redacted]"}'
    assert "hunter2" not in json.dumps(record).lower()


def test_a_thread_masks_its_tool_calls_and_results(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    run(served, {"input": "Find kb", "thread_id": "t-1"})
    thread = httpx.get(served.url("/threads/t-1")).json()
    _system, _user, asked, answered, said = thread["messages"]
    assert asked["tool_calls"][0]["arguments"] == MASKED_ARGUMENTS
    assert json.loads(answered["content"]) == MASKED_RESULT
    assert said["content"] == "Found it."
    assert "hunter2" not in json.dumps(thread).lower()


def test_a_re_joined_stream_masks_the_tool_results_of_its_done_event(serve: Serve) -> None:
    served = serve(ScriptedProvider(SECRET_LOOKUP, "Found it."))
    answer = run(served, {"input": "Find kb"})
    again = httpx.get(served.url(f"/runs/{answer['run_id']}/stream"), timeout=30)
    done = sse_events(again.text)[-1]
    assert (done["event"], done["data"]["content"]) == ("done", "Found it.")
    assert done["data"]["tool_results"] == {"c1": MASKED_RESULT}
    assert "hunter2" not in again.text.lower()
