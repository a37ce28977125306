"""The scripted support model, driven by hand through each real provider, two turns each."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmProvider, LlmRequest, LlmResponse, ToolDefinition
from bloge.llm.providers import AnthropicProvider, ClaudeProvider, OpenAIChatProvider
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.llm.providers.support_servers import (
    ESCALATION_ANSWER,
    AnthropicSupportServer,
    OpenAISupportServer,
)

TOOLS = (
    ToolDefinition("searchKnowledgeBase", "Search help articles",
                   {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"]}),
    ToolDefinition("createTicket", "Open a support ticket",
                   {"type": "object", "properties": {"title": {"type": "string"},
                    "description": {"type": "string"}, "priority": {"type": "string"}},
                    "required": ["title", "description", "priority"]}),
    ToolDefinition("escalateToHuman", "Hand over to a person",
                   {"type": "object", "properties": {"reason": {"type": "string"}},
                    "required": ["reason"]}),
)
SYSTEM = LlmMessage.system("You are a helpful customer-support agent.")


def openai(client: httpx.AsyncClient) -> LlmProvider:
    return OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                              http_client=client)


def anthropic(client: httpx.AsyncClient) -> LlmProvider:
    return AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=client)


def claude(client: httpx.AsyncClient) -> LlmProvider:
    return ClaudeProvider(AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=client))


PROVIDERS = [
    pytest.param(openai, OpenAISupportServer, "gpt-4o", id="openai"),
    pytest.param(anthropic, AnthropicSupportServer, "claude-sonnet-4-5", id="anthropic"),
    pytest.param(claude, AnthropicSupportServer, "", id="claude"),
]
CASES = [
    pytest.param("How do I reset my password?", "searchKnowledgeBase",
                 {"query": "How do I reset my password?"},
                 {"articleId": "KB-1042", "summary": "Use the reset link on the login page."},
                 "I found KB-1042: Use the reset link on the login page.", id="search"),
    pytest.param("I want a refund for order 77", "createTicket",
                 {"title": "Support follow-up", "description": "I want a refund for order 77",
                  "priority": "high"},
                 {"ticketId": "T-9", "priority": "high"},
                 "I created ticket T-9 with priority high.", id="ticket"),
    pytest.param("Let me talk to a human please", "escalateToHuman",
                 {"reason": "Customer explicitly requested a human agent"},
                 {"escalated": True}, ESCALATION_ANSWER, id="escalate"),
]


async def streamed(provider: LlmProvider, request: LlmRequest) -> LlmResponse:
    """The stream folded back into one response, checking that ``done`` comes last."""
    text, calls, last = [], [], None
    chunks: AsyncIterator = provider.stream_chat(request)
    async for chunk in chunks:
        assert last is None, "nothing may follow the done chunk"
        text.append(chunk.content)
        if chunk.tool_call:
            calls.append(chunk.tool_call)
        if chunk.done:
            last = chunk
    assert last is not None
    return LlmResponse("".join(text), last.finish_reason or "", last.prompt_tokens or 0,
                       last.completion_tokens or 0, tuple(calls))


async def complete(provider: LlmProvider, request: LlmRequest) -> LlmResponse:
    return await provider.chat(request)


@pytest.mark.parametrize(("make", "server_type", "model"), PROVIDERS)
@pytest.mark.parametrize(("question", "tool", "arguments", "result", "answer"), CASES)
@pytest.mark.parametrize("call", [complete, streamed], ids=["chat", "stream"])
async def test_the_scripted_support_model_calls_its_tool_then_answers_from_the_result(
    make: Callable[[httpx.AsyncClient], LlmProvider], server_type: type, model: str,
    question: str, tool: str, arguments: dict, result: dict, answer: str,
    call: Callable,
) -> None:
    server = server_type()
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        provider = make(client)
        messages = [SYSTEM, LlmMessage.user(question)]

        first = await call(provider, LlmRequest(model, tuple(messages), tools=TOOLS))
        assert first.finish_reason == "tool_calls"
        assert first.content == ""
        [tool_call] = first.tool_calls
        assert (tool_call.name, json.loads(tool_call.arguments)) == (tool, arguments)
        assert first.prompt_tokens > 0
        assert first.completion_tokens > 0

        messages += [LlmMessage.assistant(first.content, first.tool_calls),
                     LlmMessage.tool(tool_call.id, json.dumps(result))]
        second = await call(provider, LlmRequest(model, tuple(messages), tools=TOOLS))
        assert (second.content, second.finish_reason, second.tool_calls) == (answer, "stop", ())
    assert len(server.requests) == 2


async def test_the_fake_servers_reject_a_conversation_their_api_rejects() -> None:
    orphan = (LlmMessage.user("Hi"), LlmMessage.tool("call_gone", "{}"))
    server = OpenAISupportServer()
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        with pytest.raises(ProviderError, match="must be a response to a preceeding message") as caught:
            await openai(client).chat(LlmRequest("gpt-4o", orphan))
    assert caught.value.status_code == 400
