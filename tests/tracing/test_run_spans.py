"""A recorded run's GenAI spans and metrics, as an OTLP receiver gets them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bloge import (
    Agent,
    AgentDslCompiler,
    AgentLoopOperator,
    AgentRunError,
    LlmChatOperator,
    OperatorRegistry,
    ProviderError,
)
from bloge.agent import LlmSummarizer
from bloge.agent.memory.summary import SUMMARIZE_PROMPT
from bloge.core import tracecontext
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import RecordedRuns, open_store
from bloge.tracing import RunTracing
from tests.handoffs.agents import billing, triage
from tests.server.live_server import LiveServer
from tests.tracing.conftest import tracing_to
from tests.tracing.receiver import Receiver

AGENT = """
agent clerk {
  model = "gpt-4o"
  max_turns = 4
  tool lookup : Lookup { input { q = tool_args.q } }
}
"""
CALLER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def model(request: LlmRequest) -> LlmResponse:
    """Turn 1 looks a word up (with a password in its arguments); turn 2 answers."""
    if not any(m.role == "tool" for m in request.messages):
        return LlmResponse("", "tool_calls", prompt_tokens=12, completion_tokens=3,
                           tool_calls=(ToolCall("call-1", "lookup",
                                                '{"q": "tea", "password": "hunter2"}'),))
    return LlmResponse("Tea is a drink.", "stop", prompt_tokens=20, completion_tokens=5)


def clerk(tmp_path: Path, tracing: RunTracing, answer: Callable[[LlmRequest], LlmResponse] = model, *,
          summarized: bool = False) -> AgentLoopOperator:
    """The clerk, its model ``answer``, its runs recorded and traced; with ``summarized``, a
    ``summary(2)`` memory that summarizes with its model."""
    registry = (OperatorRegistry.builder()
                .register("Lookup", lambda input: {"found": input["q"].upper()})
                .register("llmChat", LlmChatOperator(FunctionProvider(answer))).build())
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    source = AGENT.replace("max_turns = 4", "max_turns = 4\n  memory = summary(2)") \
        if summarized else AGENT
    return AgentLoopOperator("clerk", AgentDslCompiler(registry).compile(source), registry,
                             store=RecordedRuns(store),
                             summarizer=LlmSummarizer.through(registry, "gpt-4o")
                             if summarized else None)


async def test_a_tool_using_run_is_one_trace_of_agent_chat_and_tool_spans(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    output = await clerk(tmp_path, tracing).aexecute("What is tea?")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 4)
    (run,) = received.named("invoke_agent clerk")
    chats = sorted(received.named("chat gpt-4o"), key=lambda span: span.attributes["bloge.turn"])
    (tool,) = received.named("execute_tool lookup")
    assert {span.trace_id for span in spans} == {run.trace_id}
    assert run.parent is None
    assert [span.parent for span in (*chats, tool)] == [run.span_id] * 3
    assert len({span.span_id for span in spans}) == 4
    assert run.attributes == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "clerk",
        "gen_ai.provider.name": "offline", "gen_ai.conversation.id": output.thread_id,
        "bloge.run.id": output.run_id, "bloge.thread.id": output.thread_id,
        "bloge.exit_reason": "stop", "bloge.turns": 2, "bloge.llm_calls": 2,
        "bloge.usage.total_tokens": 40,
        # bloge's own: what the run spent (gpt-4o's list price), and its tool calls
        "bloge.usage.cost_usd": 0.00016, "bloge.usage.tool_calls": 1,
    }
    assert chats[0].attributes["gen_ai.request.model"] == "gpt-4o"
    assert chats[0].attributes["gen_ai.usage.input_tokens"] == 12
    assert chats[0].attributes["gen_ai.usage.output_tokens"] == 3
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chats[1].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert tool.attributes["gen_ai.tool.name"] == "lookup"
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1"
    assert tool.attributes["bloge.turn"] == 1
    assert run.start <= chats[0].start <= chats[0].end <= tool.start <= tool.end \
        <= chats[1].start <= chats[1].end <= run.end
    assert run.resource["service.name"] == "bloge-tests"


async def test_content_stays_out_of_spans_unless_asked(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    await clerk(tmp_path, tracing).aexecute("What is tea?")
    assert tracing.flush()
    spans = received.wait_for(lambda spans: len(spans) == 4)
    keys = {key for span in spans for key in span.attributes}
    assert not keys & {"gen_ai.input.messages", "gen_ai.output.messages",
                       "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}


async def test_captured_content_is_redacted_as_the_journal_is(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer]) -> None:
    received, server = receiver
    tracing = tracing_to(server, capture_content=True)
    await clerk(tmp_path, tracing).aexecute("What is tea? My api_key=sk-secret-1")
    tracing.shutdown()
    received.wait_for(lambda spans: len(spans) == 4)
    (tool,) = received.named("execute_tool lookup")
    assert tool.attributes["gen_ai.tool.call.arguments"] == \
        '{"q":"tea","password":"[redacted]"}'
    assert tool.attributes["gen_ai.tool.call.result"] == '{"found":"TEA"}'
    first, second = sorted(received.named("chat gpt-4o"),
                           key=lambda span: span.attributes["bloge.turn"])
    assert "What is tea?" in first.attributes["gen_ai.input.messages"]
    assert "sk-secret-1" not in first.attributes["gen_ai.input.messages"]
    assert "hunter2" not in first.attributes["gen_ai.output.messages"]
    assert "Tea is a drink." in second.attributes["gen_ai.output.messages"]
    everything = repr([span.attributes for span in received.spans])
    assert "hunter2" not in everything
    assert "sk-secret-1" not in everything


async def test_the_genai_histograms_count_tokens_and_durations(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    await clerk(tmp_path, tracing).aexecute("What is tea?")
    assert tracing.flush()
    tokens = {point.attributes["gen_ai.token.type"]: point for point in received.points
              if point.metric == "gen_ai.client.token.usage"}
    assert (tokens["input"].count, tokens["input"].sum) == (2, 32)
    assert (tokens["output"].count, tokens["output"].sum) == (2, 8)
    assert tokens["input"].unit == "{token}"
    assert tokens["input"].attributes["gen_ai.request.model"] == "gpt-4o"
    (duration,) = [point for point in received.points
                   if point.metric == "gen_ai.client.operation.duration"]
    assert duration.count == 2
    assert duration.unit == "s"
    assert duration.attributes == {"gen_ai.operation.name": "chat",
                                   "gen_ai.request.model": "gpt-4o",
                                   "gen_ai.provider.name": "offline"}


async def test_a_memory_summary_is_a_chat_span_of_the_run_and_counts_in_the_histograms(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    def summarizing(request: LlmRequest) -> LlmResponse:
        if request.messages[0].content == SUMMARIZE_PROMPT:
            return LlmResponse("They asked about tea.", "stop", prompt_tokens=100,
                               completion_tokens=10)
        return model(request)

    received, _ = receiver
    await clerk(tmp_path, tracing, summarizing, summarized=True).aexecute("What is tea?")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 5)
    (run,) = received.named("invoke_agent clerk")
    chats = received.named("chat gpt-4o")
    (summary,) = [span for span in chats if span.attributes.get("bloge.memory.summary")]
    assert summary.parent == run.span_id
    assert len({span.span_id for span in spans}) == 5
    assert summary.attributes["bloge.turn"] == 2
    assert summary.attributes["bloge.memory.summarized_messages"] == 1
    assert summary.attributes["gen_ai.usage.input_tokens"] == 100
    assert summary.attributes["gen_ai.usage.output_tokens"] == 10
    tokens = {point.attributes["gen_ai.token.type"]: point for point in received.points
              if point.metric == "gen_ai.client.token.usage"}
    assert (tokens["input"].count, tokens["input"].sum) == (3, 132)


async def test_a_run_started_in_a_callers_trace_is_its_child_and_its_calls_carry_it(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    token = tracecontext.caller.set(tracecontext.TraceParent.parse(CALLER, "vendor=1"))
    try:
        output = await clerk(tmp_path, tracing).aexecute("What is tea?")
    finally:
        tracecontext.caller.reset(token)
    assert tracing.flush()
    spans = received.wait_for(lambda spans: len(spans) == 4)
    (run,) = received.named("invoke_agent clerk")
    assert {span.trace_id for span in spans} == {"0af7651916cd43dd8448eb211c80319c"}
    assert run.parent == "b7ad6b7169203331"
    assert output.run_id


async def test_an_agent_run_by_a_tool_is_a_child_of_that_tool_call(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    inner = clerk(tmp_path, tracing)
    store = inner.store.store  # type: ignore[union-attr]  # clerk's RecordedRuns

    async def ask_the_clerk(input: dict) -> str:
        return (await inner.aexecute(input["q"])).content

    registry = (OperatorRegistry.builder().register("Lookup", ask_the_clerk)
                .register("llmChat", LlmChatOperator(FunctionProvider(model))).build())
    outer = AgentLoopOperator("desk", AgentDslCompiler(registry).compile(
        AGENT.replace("clerk", "desk")), registry, store=RecordedRuns(store))
    await outer.aexecute("Ask the clerk about tea")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 8)
    (desk,) = received.named("invoke_agent desk")
    (asking,) = [span for span in received.named("execute_tool lookup")
                 if span.parent == desk.span_id]
    (clerk_run,) = received.named("invoke_agent clerk")
    assert clerk_run.parent == asking.span_id
    assert {span.trace_id for span in spans} == {desk.trace_id}
    assert sorted(span.name for span in spans if span.parent == desk.span_id) == [
        "chat gpt-4o", "chat gpt-4o", "execute_tool lookup"]


async def test_a_model_call_that_fails_is_an_error_span_and_so_is_the_run(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver

    def failing(request: LlmRequest) -> LlmResponse:
        if any(m.role == "tool" for m in request.messages):
            raise ProviderError("the model went away", provider="test")
        return model(request)

    agent = clerk(tmp_path, tracing, failing)
    with pytest.raises(AgentRunError):
        await agent.aexecute("What is tea?")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 4)
    (run,) = received.named("invoke_agent clerk")
    failed = [span for span in received.named("chat gpt-4o") if span.attributes["bloge.turn"] == 2]
    assert [span.attributes["error.type"] for span in failed] == ["ProviderError"]
    assert failed[0].status == 2  # ERROR
    assert run.attributes["error.type"] == "ProviderError"
    assert run.attributes["bloge.exit_reason"] == "error"
    assert len({span.span_id for span in spans}) == 4
    (duration,) = [point for point in received.points
                   if point.metric == "gen_ai.client.operation.duration"
                   and "error.type" in point.attributes]
    assert duration.count == 1


async def test_after_a_handoff_the_spans_name_the_agent_that_took_over(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    billing_agent, _ = billing()
    triage_agent, _ = triage(handoffs=[billing_agent], store=store)
    await triage_agent.arun_output("I want a refund for A1")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 5)
    (run,) = received.named("invoke_agent triage")
    assert run.attributes["gen_ai.agent.name"] == "triage"
    assert [(span.name, span.attributes["bloge.turn"], span.attributes["gen_ai.agent.name"])
            for span in sorted(spans, key=lambda span: span.start) if span is not run] == [
        ("chat default", 1, "triage"), ("chat default", 2, "billing"),
        ("execute_tool refund", 2, "billing"), ("chat default", 3, "billing")]
    assert run.events == (("bloge.handoff", {
        "bloge.handoff.name": "billing", "bloge.handoff.from_agent": "triage",
        "bloge.handoff.to_agent": "billing", "gen_ai.tool.call.id": "h1", "bloge.turn": 1}),)


async def test_a_run_resumed_after_its_handoff_names_the_agent_it_goes_on_with(
        tmp_path: Path, receiver: tuple[Receiver, LiveServer], tracing: RunTracing) -> None:
    received, _ = receiver
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    store.tracing = tracing
    answers: list[str | Exception] = [ProviderError("overloaded", provider="scripted"),
                                      "Refunded A1."]

    def answer(request: LlmRequest) -> LlmResponse:
        given = answers.pop(0)
        if isinstance(given, Exception):
            raise given
        return LlmResponse(given, "stop")

    billing_agent = Agent(FunctionProvider(answer), name="billing", system_prompt="Billing.")
    triage_agent, _ = triage(handoffs=[billing_agent], store=store)
    with pytest.raises(AgentRunError) as caught:
        await triage_agent.arun_output("I want a refund for A1")
    await triage_agent.aresume(caught.value.run_id or "")
    assert tracing.flush()

    spans = received.wait_for(lambda spans: len(spans) == 5)
    failed, ok = 2, 0  # the spans' status codes
    assert sorted((span.name, span.attributes["gen_ai.agent.name"], span.status)
                  for span in spans) == [
        ("chat default", "billing", ok), ("chat default", "billing", failed),
        ("chat default", "triage", ok),
        ("invoke_agent triage", "triage", ok), ("invoke_agent triage", "triage", failed)]
