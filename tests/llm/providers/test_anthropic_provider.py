"""AnthropicProvider over HTTP: what goes on the wire and what comes back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, ToolCall, ToolDefinition
from bloge.llm.providers import AnthropicProvider
from tests.llm.providers.conftest import ANTHROPIC_KEY
from tests.llm.providers.wire_payloads import (
    Script,
    WireCall,
    anthropic_error,
    anthropic_events,
    anthropic_message,
    anthropic_sse,
    json_response,
    sse_response,
    text_block,
    tool_use_block,
)

WEATHER = ToolDefinition("get_weather", "Current weather",
                         {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]})
REQUEST = LlmRequest("claude-sonnet-4-5",
                     (LlmMessage.system("Be brief."), LlmMessage.user("Weather in Paris?")),
                     tools=(WEATHER,), tool_choice="required", stop=("END",))
PARIS = WireCall("toolu_01A09q90qw90lq917835lq9", "get_weather", ('{"city":', ' "Paris"}'))
ROME = WireCall("toolu_01B", "get_weather", ('{"city": "Rome"}',))


def provider(script: Script, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client(), **options)


async def collect(chunks: AsyncIterator[LlmChunk]) -> list[LlmChunk]:
    return [c async for c in chunks]


def ok(content: list[dict], **options: Any) -> httpx.Response:
    return json_response(200, anthropic_message(content, **options))


async def test_chat_posts_the_request_to_v1_messages() -> None:
    script = Script([ok([text_block("Sunny.")])])
    await provider(script, prompt_caching=False).chat(REQUEST)
    [sent] = script.requests
    assert (sent.method, str(sent.url)) == ("POST", "https://api.anthropic.com/v1/messages")
    assert sent.headers["x-api-key"] == ANTHROPIC_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    assert script.body() == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"name": "get_weather", "description": "Current weather",
                   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                    "required": ["city"]}}],
        "tool_choice": {"type": "any"},
        "stop_sequences": ["END"],
    }


async def test_base_url_version_max_tokens_and_headers_are_configurable() -> None:
    script = Script([ok([text_block("Hi")])])
    await provider(script, base_url="https://gateway.example/anthropic/", version="2024-01-01",
                   max_tokens=4096, headers={"anthropic-beta": "tools-2024"}).chat(REQUEST)
    sent = script.requests[0]
    assert str(sent.url) == "https://gateway.example/anthropic/v1/messages"
    assert sent.headers["anthropic-version"] == "2024-01-01"
    assert sent.headers["anthropic-beta"] == "tools-2024"
    assert script.body()["max_tokens"] == 4096


async def test_the_requests_own_max_tokens_wins() -> None:
    script = Script([ok([text_block("Hi")])])
    await provider(script).chat(LlmRequest("claude", (LlmMessage.user("Hi"),), max_tokens=50))
    assert script.body()["max_tokens"] == 50


async def test_a_plain_answer_comes_back_with_finish_reason_and_usage() -> None:
    script = Script([ok([text_block("Sunny, 21 °C.")], input_tokens=40, output_tokens=9)])
    response = await provider(script).chat(REQUEST)
    assert (response.content, response.finish_reason) == ("Sunny, 21 °C.", "stop")
    assert (response.prompt_tokens, response.completion_tokens) == (40, 9)


async def test_a_single_tool_call_comes_back() -> None:
    script = Script([ok([tool_use_block(PARIS)], stop_reason="tool_use")])
    response = await provider(script).chat(REQUEST)
    assert response.tool_calls == (ToolCall(PARIS.id, "get_weather", '{"city":"Paris"}'),)
    assert (response.content, response.finish_reason) == ("", "tool_calls")


async def test_parallel_tool_calls_come_back_in_order() -> None:
    script = Script([ok([text_block("Checking both."), tool_use_block(PARIS),
                         tool_use_block(ROME)], stop_reason="tool_use")])
    response = await provider(script).chat(REQUEST)
    assert response.content == "Checking both."
    assert [c.id for c in response.tool_calls] == [PARIS.id, ROME.id]


async def test_streaming_sends_stream_true_and_accepts_an_event_stream() -> None:
    script = Script([sse_response(anthropic_sse(anthropic_events(["Hi"])))])
    await collect(provider(script).stream_chat(REQUEST))
    assert script.body()["stream"] is True
    assert script.requests[0].headers["accept"] == "text/event-stream"


async def test_streamed_text_and_tool_calls_arrive_in_order_with_usage() -> None:
    body = anthropic_sse(anthropic_events(["Let me ", "check."], calls=[PARIS, ROME],
                                          input_tokens=472, output_tokens=89))
    chunks = await collect(provider(Script([sse_response(body, piece=11)])).stream_chat(REQUEST))
    assert chunks == [
        LlmChunk("Let me "), LlmChunk("check."),
        LlmChunk(tool_call=ToolCall(PARIS.id, "get_weather", '{"city": "Paris"}')),
        LlmChunk(tool_call=ToolCall(ROME.id, "get_weather", '{"city": "Rome"}')),
        LlmChunk(done=True, finish_reason="tool_calls", prompt_tokens=472, completion_tokens=89,
                 model="claude-sonnet-4-5"),
    ]


async def test_an_error_event_in_the_stream_is_a_provider_error() -> None:
    events = [*anthropic_events(["Hel"])[:4], anthropic_error("overloaded_error", "Overloaded")]
    chunks = provider(Script([sse_response(anthropic_sse(events))])).stream_chat(REQUEST)
    assert (await anext(chunks)).content == "Hel"
    with pytest.raises(ProviderError, match="Overloaded") as caught:
        await anext(chunks)
    assert (caught.value.provider, caught.value.retryable) == ("anthropic", True)


async def test_a_stream_without_message_stop_completes_after_its_stop_reason() -> None:
    events = anthropic_events(["Hi"])[:-1]
    chunks = await collect(provider(Script([sse_response(anthropic_sse(events))])).stream_chat(
        REQUEST))
    assert chunks[-1] == LlmChunk(done=True, finish_reason="stop", prompt_tokens=25,
                                  completion_tokens=15, model="claude-sonnet-4-5")


async def test_a_stream_cut_before_its_stop_reason_is_a_provider_error() -> None:
    events = anthropic_events(["Hi"])[:-2]
    with pytest.raises(ProviderError, match="ended before the answer was complete"):
        await collect(provider(Script([sse_response(anthropic_sse(events))])).stream_chat(REQUEST))


async def test_a_malformed_answer_is_a_provider_error() -> None:
    body = anthropic_message([])
    del body["content"]
    with pytest.raises(ProviderError, match="no content list"):
        await provider(Script([json_response(200, body)])).chat(REQUEST)


async def test_the_provider_is_a_transport_for_prepared_bodies() -> None:
    script = Script([ok([text_block("Hi")])])
    body = {"model": "claude", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]}
    answer = await provider(script)(body)
    assert answer["content"] == [{"type": "text", "text": "Hi"}]
    assert script.body() == body
