"""Runs served by ``bloge serve`` join the trace of the request that started them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import httpx
import pytest

from bloge import rpc
from bloge.core import tracecontext
from bloge.core.tracecontext import TraceParent
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.server import ServedAgents, ServerConfig, create_app
from bloge.store import Store, open_store
from bloge.tracing import RunTracing
from tests.server.conftest import served_app
from tests.server.live_server import LiveServer
from tests.tracing.receiver import Receiver

LOOKUP = LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"


@pytest.fixture
def traced_store(tmp_path: Path, tracing: RunTracing) -> Iterator[Store]:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    yield store
    store.close()


def test_a_streamed_run_is_a_child_of_the_requests_span(
        traced_store: Store, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    app = served_app(ScriptedProvider(LOOKUP, "Found the word."), traced_store, ServerConfig())
    with LiveServer(app) as server:
        response = httpx.post(server.url("/agents/helper/runs"),
                              json={"input": "Find kb", "stream": True},
                              headers={"traceparent": TRACEPARENT, "tracestate": "vendor=7"})
        assert response.headers["content-type"].startswith("text/event-stream")
        assert "event: done" in response.text
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 4)
    (run,) = received.named("invoke_agent helper")
    assert {span.trace_id for span in spans} == {CALLER_TRACE}
    assert run.parent == CALLER_SPAN
    assert sorted(span.name for span in spans if span.parent == run.span_id) == [
        "chat gpt-4o", "chat gpt-4o", "execute_tool lookup"]


def test_an_openai_compatible_run_joins_the_callers_trace(
        traced_store: Store, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    app = served_app(ScriptedProvider("Hello."), traced_store, ServerConfig())
    with LiveServer(app) as server:
        response = httpx.post(server.url("/v1/chat/completions"),
                              json={"model": "helper", "stream": True,
                                    "messages": [{"role": "user", "content": "Hi"}]},
                              headers={"traceparent": TRACEPARENT})
        assert "[DONE]" in response.text
    assert tracing.flush()
    received.wait_for(lambda spans: len(spans) == 2)
    (run,) = received.named("invoke_agent helper")
    assert (run.trace_id, run.parent) == (CALLER_TRACE, CALLER_SPAN)


def test_a_request_without_a_trace_starts_one_per_run(
        traced_store: Store, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    app = served_app(ScriptedProvider("Hello.", "Again."), traced_store, ServerConfig())
    with LiveServer(app) as server:
        for _ in range(2):
            httpx.post(server.url("/agents/helper/runs"), json={"input": "Hi"},
                       headers={"traceparent": "00-garbage"}).raise_for_status()
    assert tracing.flush()
    received.wait_for(lambda spans: len(spans) == 4)
    runs = received.named("invoke_agent helper")
    assert len({run.trace_id for run in runs}) == 2
    assert [run.parent for run in runs] == [None, None]


async def test_an_mcp_tool_call_joins_the_callers_trace(
        traced_store: Store, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")
    import httpx2  # noqa: PLC0415 -- with the extra
    from mcp import Client  # noqa: PLC0415 -- with the extra
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 -- as above

    received, _ = receiver
    app = served_app(ScriptedProvider("Hi."), traced_store, ServerConfig(), mcp=True)
    with LiveServer(app) as server:
        async with httpx2.AsyncClient(headers={"traceparent": TRACEPARENT}) as http, \
                Client(streamable_http_client(server.url("/mcp"), http_client=http),
                       cache=None) as mcp:
            result = await mcp.call_tool("helper", {"message": "Hi"})
    assert not result.is_error
    assert tracing.flush()
    received.wait_for(lambda spans: len(spans) == 2)
    (run,) = received.named("invoke_agent helper")
    assert (run.trace_id, run.parent) == (CALLER_TRACE, CALLER_SPAN)


class Tracer(Protocol):
    async def caller(self) -> str: ...


class CallerEcho:
    """Says which trace context the call it serves was made in."""

    async def caller(self) -> str:
        context = tracecontext.caller.get()
        return "" if context is None else context.header


async def test_an_rpc_call_from_a_traced_run_reaches_the_service_in_that_trace(
        traced_store: Store) -> None:
    app = create_app(ServedAgents({}, lambda definition: definition), store=traced_store,
                     rpc={"tracer": rpc.serve(CallerEcho(), as_=Tracer)})
    calling = TraceParent.parse(TRACEPARENT)
    with LiveServer(app) as server:
        async with rpc.HttpTransport(server.url()) as transport:
            service = rpc.proxy(Tracer, transport, "tracer")
            assert await service.caller() == ""
            token = tracecontext.outgoing.set(calling)
            try:
                assert await service.caller() == TRACEPARENT
            finally:
                tracecontext.outgoing.reset(token)
