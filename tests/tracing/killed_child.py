"""The program the traced crash test kills: a traced run whose second tool call never ends.

Run as ``python killed_child.py STORE_URL TRACES_URL TRACEPARENT``. The run starts in the
caller's trace ``TRACEPARENT``; once its second tool call runs, the spans ended so far are
sent to ``TRACES_URL`` and it prints ``ready``, then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys
import threading

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.core import tracecontext
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import RecordedRuns, Store, open_store
from bloge.tracing import RunTracing

AGENT = """
agent shop {
  model = "gpt-4o"
  max_turns = 5
  tool lookup : Lookup { input { q = tool_args.q } }
  tool ship : Ship { input { item = tool_args.item } }
}
"""


def model(request: LlmRequest) -> LlmResponse:
    """Turn 1 looks up a; turn 2 ships; turn 3 answers."""
    answered = sum(1 for m in request.messages if m.role == "assistant")
    if answered == 0:
        return LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "a"}'),))
    if answered == 1:
        return LlmResponse("", "tool_calls", tool_calls=(ToolCall("c2", "ship",
                                                                  '{"item": "book"}'),))
    return LlmResponse("Done.")


def shop(store_url: str, tracing: RunTracing, *,
         hang: bool) -> tuple[AgentLoopOperator, Store]:
    def ship(input: dict) -> str:
        if hang:
            tracing.flush()
            print("ready", flush=True)  # noqa: T201 -- the parent waits for this line
            threading.Event().wait()
        return "shipped"

    registry = (OperatorRegistry.builder()
                .register("Lookup", lambda input: {"found": input["q"]})
                .register("Ship", ship)
                .register("llmChat", LlmChatOperator(FunctionProvider(model))).build())
    store = open_store(store_url)
    store.tracing = tracing
    return AgentLoopOperator("shop", AgentDslCompiler(registry).compile(AGENT), registry,
                             store=RecordedRuns(store)), store


if __name__ == "__main__":
    store_url, traces_url, traceparent = sys.argv[1:4]
    traced = RunTracing(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url)))
    tracecontext.caller.set(tracecontext.TraceParent.parse(traceparent))
    asyncio.run(shop(store_url, traced, hang=True)[0].aexecute("Ship the book"))
