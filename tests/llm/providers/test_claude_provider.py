"""ClaudeProvider: the chapter's shape, a request builder plus an injectable transport."""

from __future__ import annotations

from typing import Any

import pytest

from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
from bloge.core import BlogeUsageError, ProviderError
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, ToolCall
from bloge.llm.chunks import join_chunks
from bloge.llm.providers import AnthropicProvider, ClaudeProvider
from bloge.llm.providers.claude import DEFAULT_MODEL
from tests.llm.providers.conftest import ANTHROPIC_KEY
from tests.llm.providers.wire_payloads import (
    WireCall,
    anthropic_message,
    text_block,
    tool_use_block,
)


class RecordingTransport:
    """A ClaudeTransport that records request bodies and answers with a fixed message."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        return self.answer


def answering(*content: dict, **options: Any) -> RecordingTransport:
    return RecordingTransport(anthropic_message(list(content), **options))


REQUEST = LlmRequest("", (LlmMessage.system("Answer in French."), LlmMessage.user("Hi")))


def test_an_agent_runs_on_a_claude_provider() -> None:
    transport = answering(text_block("Bonjour !"))
    registry = OperatorRegistry({"llmChat": LlmChatOperator(ClaudeProvider(transport))})
    builder = AgentBuilder.create("greeter", registry=registry).model("claude-haiku-4-5")
    agent = builder.to_operator("greeter")
    assert agent.execute("Hi").content == "Bonjour !"
    assert transport.bodies[0]["messages"] == [{"role": "user", "content": "Hi"}]


async def test_defaults_fill_in_model_max_tokens_and_system() -> None:
    transport = answering(text_block("Bonjour"))
    await ClaudeProvider(transport, system="You are terse.").chat(REQUEST)
    assert transport.bodies == [{
        "model": "claude-opus-4-8", "max_tokens": 1024,
        "system": "You are terse.\n\nAnswer in French.",
        "messages": [{"role": "user", "content": "Hi"}]}]


async def test_the_requests_model_and_max_tokens_win() -> None:
    transport = answering(text_block("Bonjour"))
    provider = ClaudeProvider(transport, model="claude-haiku-4-5", max_tokens=64)
    await provider.chat(LlmRequest("claude-sonnet-4-5", (LlmMessage.user("Hi"),), max_tokens=8))
    assert (transport.bodies[0]["model"], transport.bodies[0]["max_tokens"]) == (
        "claude-sonnet-4-5", 8)


async def test_the_transports_answer_is_parsed() -> None:
    call = WireCall("toolu_1", "get_weather", ('{"city":"Paris"}',))
    transport = answering(text_block("Checking."), tool_use_block(call), stop_reason="tool_use",
                          input_tokens=12, output_tokens=7)
    response = await ClaudeProvider(transport).chat(REQUEST)
    assert response.content == "Checking."
    assert response.tool_calls == (ToolCall("toolu_1", "get_weather", '{"city":"Paris"}'),)
    assert (response.finish_reason, response.prompt_tokens, response.completion_tokens) == (
        "tool_calls", 12, 7)


async def test_streaming_over_a_plain_transport_replays_one_answer() -> None:
    call = WireCall("toolu_1", "get_weather", ('{"city":"Paris"}',))
    transport = answering(text_block("Checking."), tool_use_block(call), stop_reason="tool_use")
    chunks = [c async for c in ClaudeProvider(transport).stream_chat(REQUEST)]
    assert chunks == [
        LlmChunk("Checking."),
        LlmChunk(tool_call=ToolCall("toolu_1", "get_weather", '{"city":"Paris"}')),
        LlmChunk(done=True, finish_reason="tool_calls", prompt_tokens=25, completion_tokens=15,
                 model=DEFAULT_MODEL),
    ]


async def test_streaming_over_a_plain_transport_sends_text_as_words_like_every_replay() -> None:
    transport = answering(text_block("Bonjour tout le monde."))
    provider = ClaudeProvider(transport)
    chunks = [c async for c in provider.stream_chat(REQUEST)]
    assert [c.content for c in chunks] == ["Bonjour ", "tout ", "le ", "monde.", ""]
    assert join_chunks(chunks) == await provider.chat(REQUEST)


async def test_a_malformed_answer_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="anthropic: the response has no content list"):
        await ClaudeProvider(RecordingTransport({"type": "message"})).chat(REQUEST)


def test_without_transport_or_api_key_it_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BlogeUsageError, match="ANTHROPIC_API_KEY"):
        ClaudeProvider()


async def test_without_transport_it_sends_over_http_with_the_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example")
    closed: list[AnthropicProvider] = []

    async def record_close(self: AnthropicProvider) -> None:
        closed.append(self)

    monkeypatch.setattr(AnthropicProvider, "aclose", record_close)
    async with ClaudeProvider() as provider:
        assert repr(provider) == ("ClaudeProvider(model='claude-opus-4-8', "
                                  "transport=AnthropicProvider(base_url='https://gateway.example'))")
        assert ANTHROPIC_KEY not in repr(provider)
    assert [repr(closing) for closing in closed] == [
        "AnthropicProvider(base_url='https://gateway.example')"]


async def test_a_transport_passed_in_is_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[AnthropicProvider] = []

    async def record_close(self: AnthropicProvider) -> None:
        closed.append(self)

    monkeypatch.setattr(AnthropicProvider, "aclose", record_close)
    async with ClaudeProvider(AnthropicProvider(api_key=ANTHROPIC_KEY)):
        pass
    assert closed == []
