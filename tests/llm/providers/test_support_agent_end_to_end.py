"""CONFORMANCE.md's customer-support conversation, run by the agent loop against each real
provider talking to a fake server in that provider's wire format."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from bloge import (
    AgentDslCompiler,
    AgentLoopOperator,
    Done,
    StreamingAgentLoopOperator,
)
from bloge.llm import LlmProvider
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.llm.providers.support_servers import AnthropicSupportServer, OpenAISupportServer
from tests.runtime.scenarios import support_operators

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "agent-customer-support.bloge"


def openai(server: OpenAISupportServer) -> LlmProvider:
    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    return OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                              http_client=client)


def anthropic(server: AnthropicSupportServer) -> LlmProvider:
    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    return AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=client)


PROVIDERS = [
    pytest.param(openai, OpenAISupportServer, id="openai"),
    pytest.param(anthropic, AnthropicSupportServer, id="anthropic"),
]


@pytest.mark.parametrize(("make", "server_type"), PROVIDERS)
async def test_the_password_question_runs_two_real_wire_round_trips(make: Callable, server_type: type) -> None:
    server = server_type()
    registry = support_operators(make(server))
    agent = AgentLoopOperator("support", AgentDslCompiler(registry).compile_file(EXAMPLE), registry)
    output = await agent.aexecute("How do I reset my password?")
    assert len(server.requests) == 2
    assert output.finish_reason == "stop"
    assert "KB-RESET-001" in output.content
    assert "Reset the password" in output.content
    assert output.usage.prompt_tokens > 0
    second_body = json.loads(server.requests[1].content)
    assert second_body["model"] == "gpt-4o"
    assert second_body["temperature"] == 0.2
    assert len(second_body["tools"]) == 3


@pytest.mark.parametrize(("make", "server_type"), PROVIDERS)
async def test_asking_for_a_human_stops_after_the_escalation(make: Callable, server_type: type) -> None:
    server = server_type()
    registry = support_operators(make(server))
    agent = AgentLoopOperator("support", AgentDslCompiler(registry).compile_file(EXAMPLE), registry)
    output = await agent.aexecute("I want a human agent right now.")
    assert len(server.requests) == 1
    assert output.finish_reason == "tool_calls"
    (result,) = output.tool_results.values()
    assert result["queue"] == "human-support"


@pytest.mark.parametrize(("make", "server_type"), PROVIDERS)
async def test_the_refund_conversation_streams_end_to_end(make: Callable, server_type: type) -> None:
    server = server_type()
    registry = support_operators(make(server))
    definition = AgentDslCompiler(registry).compile_file(EXAMPLE)
    agent = StreamingAgentLoopOperator("support", definition, registry)
    chunks = [chunk async for chunk in agent.stream("I need a refund, please open a ticket")]
    final = chunks[-1]
    assert isinstance(final, Done)
    assert final.final_output.content == "I created ticket TCK-1007 with priority high."
    assert all(json.loads(r.content)["stream"] for r in server.requests)
