"""``Agent.as_handler()``: the agent as an ASGI application, served by a real uvicorn."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bloge import Agent, BlogeUsageError, LlmMessage, ProviderError, ToolDefinition
from bloge.agent.facade import DEFAULT_MAX_BODY_BYTES, AgentHandler, ToolUse
from bloge.llm import LlmRequest, LlmResponse
from tests.uvicorn_server import WAIT_SECONDS, UvicornServer

SECRET = "sk-live-0123456789abcdef"


def echo(messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
    return f"agent says: {messages[0].content}"


class FailingModel:
    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise ProviderError(f"rejected the key {SECRET}", provider="test", status_code=401)

    def stream_chat(self, request: LlmRequest) -> Any:
        raise NotImplementedError


@pytest.fixture
def server() -> Iterator[UvicornServer]:
    with UvicornServer(Agent(echo).as_handler(max_body_bytes=64)) as running:
        yield running


def test_the_body_is_the_input_and_the_answer_is_plain_text(server: UvicornServer) -> None:
    response = httpx.post(server.url("/"), content="héllo".encode())
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == "agent says: héllo"


def test_the_q_parameter_is_the_input_of_a_get(server: UvicornServer) -> None:
    response = httpx.get(server.url("/"), params={"q": "what is 2 + 2?"})
    assert (response.status_code, response.text) == (200, "agent says: what is 2 + 2?")


def test_a_blank_body_falls_back_to_the_q_parameter(server: UvicornServer) -> None:
    response = httpx.post(server.url("/?q=hello"), content=" \n")
    assert (response.status_code, response.text) == (200, "agent says: hello")


def test_no_input_is_a_400_that_says_how_to_send_it(server: UvicornServer) -> None:
    response = httpx.post(server.url("/"))
    assert response.status_code == 400
    assert response.text == ("no input: send it as the request body (UTF-8 text), or as the "
                             "query parameter ?q=")


def test_a_body_that_is_not_utf8_is_a_400(server: UvicornServer) -> None:
    response = httpx.post(server.url("/"), content=b"caf\xe9")
    assert (response.status_code, response.text) == (400, "the request body is not valid UTF-8 text")


def test_a_query_that_is_not_utf8_is_a_400(server: UvicornServer) -> None:
    response = httpx.get(server.url("/?q=caf%E9"))
    assert (response.status_code, response.text) == (400, "the query string is not valid UTF-8")


def test_a_declared_body_over_the_limit_is_a_413(server: UvicornServer) -> None:
    response = httpx.post(server.url("/"), content=b"x" * 65)
    assert (response.status_code, response.text) == (413, "the request body is larger than 64 bytes")


def test_a_chunked_body_over_the_limit_is_a_413(server: UvicornServer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b"x" * 10

    response = httpx.post(server.url("/"), content=chunks())
    assert response.status_code == 413


def test_the_default_body_limit_is_one_mebibyte() -> None:
    assert DEFAULT_MAX_BODY_BYTES == 1024 * 1024
    with UvicornServer(Agent(echo).as_handler()) as running:
        assert httpx.post(running.url("/"), content=b"x" * DEFAULT_MAX_BODY_BYTES).status_code == 200
        response = httpx.post(running.url("/"), content=b"x" * (DEFAULT_MAX_BODY_BYTES + 1))
        assert response.status_code == 413


def test_another_method_is_a_405_naming_the_allowed_ones(server: UvicornServer) -> None:
    response = httpx.put(server.url("/"), content="hello")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


def test_with_a_path_it_answers_there_and_404s_elsewhere() -> None:
    with UvicornServer(Agent(echo).as_handler(path="/chat")) as running:
        assert httpx.post(running.url("/chat"), content="hi").text == "agent says: hi"
        assert httpx.post(running.url("/chat/"), content="hi").status_code == 200
        missing = httpx.post(running.url("/other"), content="hi")
        assert (missing.status_code, missing.text) == (404, "not found: this agent answers at /chat")


def test_running_out_of_turns_answers_with_the_chapters_text() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    def adding(messages: list[LlmMessage], tools: list[ToolDefinition]) -> ToolUse:
        return ToolUse("add", '{"a": 1, "b": 2}')

    with UvicornServer(Agent(adding, [add], max_turns=2).as_handler()) as running:
        response = httpx.post(running.url("/"), content="add forever")
    assert (response.status_code, response.text) == (200, "[ace-agent] max turns reached")


def test_a_failing_agent_is_a_500_without_traceback_or_secret(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="bloge.agent"), \
            UvicornServer(Agent(FailingModel()).as_handler()) as running:
        response = httpx.post(running.url("/"), content="hello")
    assert response.status_code == 500
    assert response.text == "the agent failed (AgentRunError); the server log has the details"
    assert [r.getMessage() for r in caplog.records if r.name == "bloge.agent"] == [
        "the agent failed to answer an HTTP request"]


def test_a_client_that_disconnects_cancels_the_run() -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    def waiting(messages: list[LlmMessage], tools: list[ToolDefinition]) -> ToolUse:
        return ToolUse("wait")

    with UvicornServer(Agent(waiting, [wait]).as_handler()) as running:
        client = socket.create_connection(("127.0.0.1", running.port))
        client.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
        assert started.wait(WAIT_SECONDS)
        client.close()
        assert cancelled.wait(WAIT_SECONDS)


def test_the_lifespan_protocol_is_answered() -> None:
    with UvicornServer(Agent(echo).as_handler()) as running:
        assert running.server.started
        assert running.server.lifespan.startup_failed is False  # uvicorn's lifespan "on"


async def test_a_websocket_scope_is_refused_as_asgi_asks() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        raise AssertionError(message)

    with pytest.raises(BlogeUsageError, match="an AgentHandler serves HTTP, not 'websocket'"):
        await Agent(echo).as_handler()({"type": "websocket"}, receive, send)


def test_bad_handler_options_are_usage_errors() -> None:
    async def answer(text: str) -> str:
        return text

    with pytest.raises(BlogeUsageError, match="max_body_bytes must be a whole number >= 1, got 0"):
        AgentHandler(answer, max_body_bytes=0)
    with pytest.raises(BlogeUsageError, match="path must start with '/', got 'chat'"):
        AgentHandler(answer, path="chat")
