"""Input a provider or a store would refuse is refused at the HTTP boundary: a 400 naming the
problem and where, never a 500 or a 503."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from bloge.llm import ScriptedProvider
from tests.server.conftest import Serve, V1Client

DEEP = 50_000


def deeply_nested() -> bytes:
    return b'{"input": ' + b"[" * DEEP + b"]" * DEEP + b"}"


@pytest.mark.parametrize("path", ["/agents/helper/runs", "/v1/chat/completions"])
def test_a_body_nested_too_deep_is_a_400_naming_the_limit(
        serve: Serve, caplog: pytest.LogCaptureFixture, path: str) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.post(served.url(path), content=deeply_nested(),
                          headers={"content-type": "application/json"}, timeout=30)
    # before: a 500 RecursionError, and its traceback of ~125 lines in the log
    assert response.status_code == 400, response.text
    assert "more than 200 levels deep" in response.json()["error"]["message"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


@pytest.mark.parametrize("path", ["/runs/a%00b", "/runs/a%00b/stream", "/threads/a%00b"])
def test_an_id_with_a_control_character_in_the_path_is_a_400(serve: Serve, path: str) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.get(served.url(path), timeout=30)
    # before: 404 on SQLite, 503 on PostgreSQL (which refuses NUL in text)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "path"
    assert "holds U+0000" in error["message"]


def test_a_thread_id_with_a_control_character_is_a_400(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.post(served.url("/agents/helper/runs"), timeout=30,
                          json={"input": "hello", "thread_id": "customer\u000042"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "thread_id"
    assert "holds U+0000" in error["message"]


CALL = {"id": "call_1", "name": "lookup", "arguments": '{"q": "x"}'}


@pytest.mark.parametrize(("messages", "where", "problem"), [
    ([{"role": "user", "content": "hi"},
      {"role": "tool", "tool_call_id": "call_9", "content": "42"}],
     "input[1]", "answers tool call 'call_9', which the assistant message before it did not"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [CALL]},
      {"role": "user", "content": "and?"}],
     "input[1]", "tool call 'call_1' has no tool message answering it"),
], ids=["tool-message-without-its-call", "call-without-its-answer"])
def test_the_runs_api_refuses_tool_messages_and_calls_that_do_not_pair(
        serve: Serve, messages: list[dict[str, Any]], where: str, problem: str) -> None:
    served = serve(ScriptedProvider("Hi."))
    response = httpx.post(served.url("/agents/helper/runs"), json={"input": messages},
                          timeout=30)
    # before: accepted, and a real provider then answered 400
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == where
    assert problem in error["message"]


def test_v1_refuses_an_assistant_tool_call_that_no_tool_message_answers(
        serve: Serve, v1_client: V1Client) -> None:
    served = serve(ScriptedProvider("Hi."))
    client = v1_client(served.url())
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="helper", messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "lookup", "arguments": "{}"}}]}])
    body: Any = caught.value.body
    assert body["param"] == "messages[1]"
    assert "tool call 'call_1' has no tool message answering it" in body["message"]
