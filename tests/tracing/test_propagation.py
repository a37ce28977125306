"""A traced run's outgoing calls carry its trace: each model request the span of its model
call, each rpc call of a tool the span of its tool call."""

from __future__ import annotations

import json
from pathlib import Path

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.core.tracecontext import TraceParent, span_id_of
from bloge.llm.providers.openai_provider import OpenAIChatProvider
from bloge.rpc.http import HttpTransport
from bloge.rpc.tools import RemoteOperator
from bloge.store import RecordedRuns, open_store
from bloge.tracing import RunTracing
from tests.llm.providers.wire_payloads import (
    OPENAI_MODEL,
    Script,
    WireCall,
    json_response,
    openai_completion,
)
from tests.server.live_server import LiveServer
from tests.tracing.receiver import Receiver

AGENT = """
agent clerk {
  model = "gpt-4o"
  max_turns = 4
  tool lookup : Lookup { input { q = tool_args.q } }
}
"""
CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_model_requests_and_rpc_tool_calls_carry_their_spans(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    model = Script([
        json_response(200, openai_completion(None, calls=[WireCall("call-7", "lookup",
                                                                   ('{"q": "tea"}',))],
                                             finish_reason="tool_calls")),
        json_response(200, openai_completion("Tea is a drink.")),
    ])
    service = Script([json_response(200, {"found": "TEA"})])
    rpc = HttpTransport("http://kb.internal", client=service.client())
    registry = (OperatorRegistry.builder()
                .register("Lookup", RemoteOperator(rpc, "kb", "lookup"))
                .register("llmChat", LlmChatOperator(OpenAIChatProvider(
                    base_url="https://api.openai.com/v1", api_key="sk-test",
                    http_client=model.client()))).build())
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    agent = AgentLoopOperator("clerk", AgentDslCompiler(registry).compile(AGENT), registry,
                              store=RecordedRuns(store))
    output = await agent.aexecute("What is tea?")
    assert tracing.flush()
    await store.aclose()

    spans = received.wait_for(lambda spans: len(spans) == 4)
    trace = spans[0].trace_id
    chat_ids = [f"{span_id_of(output.run_id, 'chat', turn):016x}" for turn in (1, 2)]
    assert [request.headers["traceparent"] for request in model.requests] == [
        f"00-{trace}-{span_id}-01" for span_id in chat_ids]
    (tool,) = received.named("execute_tool lookup")
    assert service.requests[0].headers["traceparent"] == f"00-{trace}-{tool.span_id}-01"
    assert json.loads(service.requests[0].content) == {"q": "tea"}
    assert sorted(span.span_id for span in received.named("chat gpt-4o")) == sorted(chat_ids)
    assert {span.attributes["gen_ai.response.model"]
            for span in received.named("chat gpt-4o")} == {OPENAI_MODEL}


async def test_calls_outside_a_traced_run_carry_no_trace(tmp_path: Path) -> None:
    service = Script([json_response(200, {"found": "TEA"})])
    rpc = HttpTransport("http://kb.internal", client=service.client())
    await rpc.send("kb", "lookup", '{"q": "tea"}')
    assert "traceparent" not in service.requests[0].headers


def test_a_malformed_traceparent_is_no_caller() -> None:
    assert TraceParent.parse("00-" + "0" * 32 + "-00f067aa0ba902b7-01") is None
    assert TraceParent.parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") is None
    assert TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7") is None
    assert TraceParent.parse(CALLER + "-extra") is None
    parsed = TraceParent.parse(CALLER, "congo=t61rcWkgMzE")
    assert parsed is not None
    assert (parsed.header, parsed.state) == (CALLER, "congo=t61rcWkgMzE")
    assert TraceParent.from_stored(parsed.stored()) == parsed
