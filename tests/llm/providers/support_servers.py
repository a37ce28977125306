"""Fake model servers playing the scripted customer-support model, one per wire format.

Each server is an ``httpx.MockTransport`` handler that answers plain and streaming
(``"stream": true``) requests in its API's real wire format, so an agent-loop conversation can
run end to end against each real provider::

    client = httpx.AsyncClient(transport=httpx.MockTransport(OpenAISupportServer()))
    provider = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key="sk-…",
                                  http_client=client)

The scripted model reads the first user message. Until a tool message exists it asks for one
tool: ``escalateToHuman`` when the message mentions "human" or "agent", ``createTicket`` when
it mentions "refund" or "ticket", else ``searchKnowledgeBase``. Then it answers from the last
tool result's JSON (``articleId``/``summary``, ``ticketId``/``priority``, or anything else
for an escalation). Like the real servers, both reject conversations their API rejects (a
tool result without its call, roles out of order, …) with a 400 in the API's error format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.llm.providers.wire_payloads import (
    WireCall,
    anthropic_error,
    anthropic_events,
    anthropic_message,
    anthropic_sse,
    json_response,
    openai_completion,
    openai_error,
    openai_sse,
    openai_stream,
    sse_response,
    text_block,
    tool_use_block,
)

ESCALATION_ANSWER = "I have escalated this conversation to a human support agent."


@dataclass(frozen=True, slots=True)
class SupportTurn:
    """One answer of the scripted model: a tool call (``tool`` and ``arguments``) or text."""

    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    answer: str = ""


def support_turn(first_user: str, last_tool_result: str | None) -> SupportTurn:
    """What the scripted model says, given the first user message and the last tool result."""
    if last_tool_result is None:
        lowered = first_user.lower()
        if "human" in lowered or "agent" in lowered:
            return SupportTurn(
                "escalateToHuman", {"reason": "Customer explicitly requested a human agent"}
            )
        if "refund" in lowered or "ticket" in lowered:
            return SupportTurn(
                "createTicket",
                {"title": "Support follow-up", "description": first_user, "priority": "high"},
            )
        return SupportTurn("searchKnowledgeBase", {"query": first_user})
    try:
        result = json.loads(last_tool_result)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        result = {}
    if "articleId" in result:
        return SupportTurn(answer=f"I found {result['articleId']}: {result.get('summary', '')}")
    if "ticketId" in result:
        return SupportTurn(
            answer=f"I created ticket {result['ticketId']} with priority {result.get('priority')}."
        )
    return SupportTurn(answer=ESCALATION_ANSWER)


def _call(turn: SupportTurn, prefix: str) -> WireCall:
    arguments = json.dumps(turn.arguments)
    third = max(1, len(arguments) // 3)
    fragments = (arguments[:third], arguments[third : 2 * third], arguments[2 * third :])
    return WireCall(f"{prefix}{turn.tool}", str(turn.tool), fragments)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


@dataclass
class OpenAISupportServer:
    """The scripted model behind ``POST …/chat/completions``."""

    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return json_response(404, openai_error("Not found", "invalid_request_error"))
        body = json.loads(request.content)
        problem = openai_conversation_problem(body["messages"])
        if problem:
            return json_response(400, openai_error(problem, "invalid_request_error"))
        messages = body["messages"]
        first_user = next(_openai_text(m) for m in messages if m["role"] == "user")
        results = [m["content"] for m in messages if m["role"] == "tool"]
        turn = support_turn(first_user, results[-1] if results else None)
        prompt = 30 + 12 * len(messages)
        calls = [_call(turn, "call_")] if turn.tool else []
        completion = 9 if turn.tool else len(_words(turn.answer))
        if body.get("stream"):
            chunks = openai_stream(_words(turn.answer), calls=calls, prompt=prompt,
                                   completion=completion)
            return sse_response(openai_sse(chunks))
        return json_response(200, openai_completion(
            turn.answer or None, calls=calls, finish_reason="tool_calls" if calls else "stop",
            prompt=prompt, completion=completion))


def _openai_text(message: Mapping[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def openai_conversation_problem(messages: list[Mapping[str, Any]]) -> str | None:
    """OpenAI's complaint about a conversation, in its own words, or ``None``."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message.get("tool_call_id") not in open_calls:
                return ("Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.")
        elif message["role"] == "assistant":
            open_calls = {c["id"] for c in message.get("tool_calls") or ()}
        else:
            open_calls = set()
    return None


@dataclass
class AnthropicSupportServer:
    """The scripted model behind ``POST /v1/messages``."""

    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method != "POST" or request.url.path != "/v1/messages":
            return json_response(404, anthropic_error("not_found_error", "Not found"))
        body = json.loads(request.content)
        problems = anthropic_conversation_problems(body)
        if problems:
            return json_response(400, anthropic_error("invalid_request_error", problems[0]))
        messages = body["messages"]
        first_user = next(t for m in messages if m["role"] == "user" for t in [_user_text(m)] if t)
        results = [_result_text(b) for m in messages for b in _blocks(m)
                   if b["type"] == "tool_result"]
        turn = support_turn(first_user, results[-1] if results else None)
        input_tokens = 30 + 12 * len(messages)
        calls = [_call(turn, "toolu_01")] if turn.tool else []
        output_tokens = 9 if turn.tool else len(_words(turn.answer))
        if body.get("stream"):
            events = anthropic_events(_words(turn.answer), calls=calls,
                                      input_tokens=input_tokens, output_tokens=output_tokens)
            return sse_response(anthropic_sse(events))
        content = [text_block(turn.answer)] if turn.answer else []
        content += [tool_use_block(c) for c in calls]
        return json_response(200, anthropic_message(
            content, stop_reason="tool_use" if calls else "end_turn",
            input_tokens=input_tokens, output_tokens=output_tokens))


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _user_text(message: Mapping[str, Any]) -> str:
    return "".join(b.get("text", "") for b in _blocks(message) if b["type"] == "text")


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def anthropic_conversation_problems(body: Mapping[str, Any]) -> list[str]:
    """What the Messages API would reject in a request body's conversation (empty if none)."""
    problems: list[str] = []
    messages = body.get("messages") or []
    if not messages:
        return ["messages: at least one message is required"]
    if messages[0]["role"] != "user":
        problems.append('messages: first message must use the "user" role')
    previous_calls: list[str] = []
    for number, message in enumerate(messages):
        where = f"messages.{number}"
        if number and message["role"] == messages[number - 1]["role"]:
            problems.append(f'{where}: roles must alternate between "user" and "assistant"')
        blocks = _blocks(message)
        if not blocks:
            problems.append(f"{where}: all messages must have non-empty content")
        problems.extend(
            f"{where}: text content blocks must contain non-whitespace text"
            for b in blocks if b["type"] == "text" and not b["text"].strip()
        )
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        leading = [b["tool_use_id"] for b in blocks[: len(results)] if b["type"] == "tool_result"]
        if results != leading:
            problems.append(f"{where}: tool_result blocks must come first in the message")
        if message["role"] == "user":
            problems.extend(
                f"{where}: tool_use ids were found without tool_result blocks immediately "
                f"after: {missing}"
                for missing in previous_calls if missing not in results
            )
            problems.extend(
                f"{where}: unexpected tool_use_id found in tool_result blocks: {orphan}. Each "
                "tool_result block must have a corresponding tool_use block in the previous "
                "message."
                for orphan in results if orphan not in previous_calls
            )
            previous_calls = []
        else:
            previous_calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
    if previous_calls and messages[-1]["role"] == "assistant":
        problems.append("messages: tool_use ids were found without tool_result blocks "
                        f"immediately after: {', '.join(previous_calls)}")
    return problems
