"""Whatever the user writes and whatever a tool returns, the offline model answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bloge import LlmMessage, ToolCall, ToolDefinition
from bloge.llm import LlmRequest
from bloge.llm.offline import OfflineProvider, ToolResult
from bloge.llm.offline.answer import compose_answer

SUPPORT_TOOLS = (
    ToolDefinition("searchKnowledgeBase", "Search the knowledge base for a relevant article", {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ToolDefinition("createTicket", "Create a support ticket for follow-up", {
        "type": "object", "required": ["title", "description", "priority"],
        "properties": {n: {"type": "string"} for n in ("title", "description", "priority")}}),
    ToolDefinition("runQuery", "Run a SQL query against the analytics database", {
        "type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["articleId", "summary", "related", "ticketId", "priority", "queue",
                         "etaMinutes", "trend", "changePct", "points", "rows", "columns",
                         "rowCount", "value", "date", "other"]), inner, max_size=6),
    max_leaves=12,
)


@given(st.text(max_size=200))
def test_any_message_gets_a_reply_whose_arguments_fill_the_schema(message: str) -> None:
    request = LlmRequest("m", (LlmMessage.user(message),), tools=SUPPORT_TOOLS)
    response = asyncio.run(OfflineProvider().chat(request))
    assert response.content or response.tool_calls
    for call in response.tool_calls:
        tool = next(t for t in SUPPORT_TOOLS if t.name == call.name)
        arguments = json.loads(call.arguments)
        assert set(arguments) == set(tool.parameters["required"])


@given(JSON, st.booleans())
def test_any_tool_result_gets_an_answer(value: Any, is_error: bool) -> None:
    content = json.dumps(value)
    answer = compose_answer([ToolResult.of("someTool", content, is_error=is_error)])
    assert answer.strip()


@given(JSON)
def test_any_tool_result_in_the_conversation_ends_the_round(value: Any) -> None:
    call = ToolCall("offline_1", "someTool", "{}")
    request = LlmRequest("m", (LlmMessage.user("hi there, find it"),
                               LlmMessage.assistant(tool_calls=[call]),
                               LlmMessage.tool("offline_1", json.dumps(value))),
                         tools=SUPPORT_TOOLS)
    response = asyncio.run(OfflineProvider().chat(request))
    assert response.tool_calls == ()
    assert response.finish_reason == "stop"


SCHEMAS = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["string", "integer", "number", "boolean", "object", "array",
                             "null", ["string", "null"], 7]),
    "enum": st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=3) | st.none(),
    "minimum": st.integers(-5, 5),
    "description": st.text(max_size=30),
    "items": st.just({"type": "string"}) | st.just("oops"),
    "properties": st.just({"query": {"type": "string"}}),
    "required": st.just(["query", "missing"]),
})
NAMES = st.sampled_from(["query", "title", "priority", "reason", "metricName", "timeRange",
                         "sql", "orderId", "flag", "count", "x"])


@given(st.dictionaries(NAMES, SCHEMAS, max_size=4), st.text(max_size=80))
def test_any_schema_gets_json_arguments_for_every_required_property(
    properties: dict[str, Any], message: str,
) -> None:
    tool = ToolDefinition("doSomething", "Do something useful", {
        "type": "object", "properties": properties, "required": [*properties, "absent"]})
    request = LlmRequest("m", (LlmMessage.user(message),), tools=(tool,),
                         tool_choice="doSomething")
    (call,) = asyncio.run(OfflineProvider().chat(request)).tool_calls
    assert set(json.loads(call.arguments)) == {*properties, "absent"}
