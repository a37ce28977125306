"""The examples' scripted models and tools, exactly as CONFORMANCE.md describes them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bloge import (
    AgentBuilder,
    AgentMemoryStrategy,
    AgentToolRef,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorContext,
    OperatorRegistry,
)
from bloge.llm import FunctionProvider, LlmChunk, LlmProvider, LlmRequest, LlmResponse, ToolCall


class KBSearchOperator:
    def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        query = str(input.get("query") or "")
        if "password" in query.lower():
            return {"articleId": "KB-RESET-001",
                    "summary": "Reset the password from Settings > Security and confirm the email link.",
                    "query": query}
        return {"articleId": "KB-REFUND-014",
                "summary": "Refund requests can be started from Orders > Request refund within 30 days.",
                "query": query}


class CreateTicketOperator:
    def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"ticketId": "TCK-1007", "status": "open",
                "priority": input.get("priority") or "normal",
                "title": input.get("title") or "Support request"}


class EscalateOperator:
    def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"queue": "human-support", "etaMinutes": 5,
                "reason": input.get("reason") or "Customer requested live assistance"}


def support_model(request: LlmRequest) -> LlmResponse:
    """The customer-support examples' scripted model."""
    message = next(m.content for m in request.messages if m.role == "user")
    tool_messages = [m for m in request.messages if m.role == "tool"]
    if not tool_messages:
        lowered = message.lower()
        if "human" in lowered or "agent" in lowered:
            call = ToolCall("call_1", "escalateToHuman",
                            json.dumps({"reason": "Customer explicitly requested a human agent"}))
        elif "refund" in lowered or "ticket" in lowered:
            call = ToolCall("call_1", "createTicket", json.dumps(
                {"title": "Support follow-up", "description": message, "priority": "high"}))
        else:
            call = ToolCall("call_1", "searchKnowledgeBase", json.dumps({"query": message}))
        return LlmResponse(finish_reason="tool_calls", tool_calls=(call,))
    result = json.loads(tool_messages[-1].content)
    if "articleId" in result:
        text = f"I found {result['articleId']}: {result['summary']}"
    elif "ticketId" in result:
        text = f"I created ticket {result['ticketId']} with priority {result['priority']}."
    else:
        text = "I have escalated this conversation to a human support agent."
    return LlmResponse(content=text, finish_reason="stop")


def support_registry(provider: FunctionProvider | None = None) -> tuple[OperatorRegistry, FunctionProvider]:
    provider = provider or FunctionProvider(support_model)
    registry = (OperatorRegistry.builder()
                .register("KBSearchOperator", KBSearchOperator())
                .register("CreateTicketOperator", CreateTicketOperator())
                .register("EscalateOperator", EscalateOperator())
                .register("llmChat", LlmChatOperator(provider))
                .build())
    return registry, provider


def support_operators(provider: LlmProvider) -> OperatorRegistry:
    """The support agent's operators, ``provider`` behind both its chat operators (whole and
    streamed)."""
    return OperatorRegistry({
        "KBSearchOperator": KBSearchOperator(),
        "CreateTicketOperator": CreateTicketOperator(),
        "EscalateOperator": EscalateOperator(),
        "llmChat": LlmChatOperator(provider),
        "llmStreamingChat": LlmStreamingChatOperator(provider),
    })


class MetricsFetchOperator:
    async def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"metricName": input["metricName"], "timeRange": input["timeRange"],
                "trend": "up", "changePct": 12.0}


class QueryRunnerOperator:
    async def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"rows": [], "sql": input["sql"]}


def analyst_model(request: LlmRequest) -> list[LlmChunk]:
    """The streaming data-analyst examples' scripted model."""
    tool_messages = [m for m in request.messages if m.role == "tool"]
    if not tool_messages:
        call = ToolCall("call_1", "fetchMetrics",
                        json.dumps({"metricName": "revenue", "timeRange": "last_7_days"}))
        return [LlmChunk(tool_call=call), LlmChunk(done=True, finish_reason="tool_calls")]
    result = json.loads(tool_messages[-1].content)
    return [LlmChunk(content="Revenue "), LlmChunk(content=f"is {result['trend']} "),
            LlmChunk(content=f"by {result['changePct']}% over the last 7 days."),
            LlmChunk(done=True, finish_reason="stop")]


def analyst_registry() -> tuple[OperatorRegistry, FunctionProvider]:
    provider = FunctionProvider(analyst_model)
    registry = (OperatorRegistry.builder()
                .register("MetricsFetchOperator", MetricsFetchOperator())
                .register("QueryRunnerOperator", QueryRunnerOperator())
                .register("llmStreamingChat", LlmStreamingChatOperator(provider))
                .build())
    return registry, provider


def support_builder(registry: OperatorRegistry | None = None) -> AgentBuilder:
    """The customer-support example written with AgentBuilder (one tool as an AgentToolRef)."""
    return (
        AgentBuilder.create("customerSupport", registry=registry)
        .model("gpt-4o")
        .system_prompt("You are a helpful customer support agent.")
        .max_turns(6)
        .max_tool_concurrency(2)
        .temperature(0.2)
        .memory(AgentMemoryStrategy.SlidingWindow(20))
        .tool("searchKnowledgeBase", "KBSearchOperator",
              description="Search the knowledge base for a relevant article",
              input={"query": "tool_args.query"})
        .tool("createTicket", "CreateTicketOperator",
              description="Create a support ticket for follow-up",
              input={"title": "tool_args.title", "description": "tool_args.description",
                     "priority": "tool_args.priority"})
        .tool(AgentToolRef.of("escalateToHuman", "EscalateOperator",
                              description="Escalate the conversation to a human support agent",
                              input={"reason": "tool_args.reason"}))
        .exit_condition('finish_reason == "stop" || tool_call("escalateToHuman")')
    )
