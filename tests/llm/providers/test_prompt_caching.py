"""Prompt caching against the providers' recorded wire formats: Anthropic's ``cache_control``
breakpoints and cache usage, OpenAI's ``prompt_cache_key`` and ``cached_tokens``."""

from __future__ import annotations

from typing import Any

from bloge.llm import LlmMessage, LlmRequest, ToolCall, ToolDefinition
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from bloge.llm.providers.anthropic_cache import MAX_BREAKPOINTS, with_breakpoints
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY
from tests.llm.providers.wire_payloads import (
    Script,
    anthropic_events,
    anthropic_message,
    anthropic_sse,
    json_response,
    openai_completion,
    openai_sse,
    openai_stream,
    openai_usage,
    sse_response,
    text_block,
)

EPHEMERAL = {"type": "ephemeral"}
WEATHER = ToolDefinition("get_weather", "Current weather",
                         {"type": "object", "properties": {"city": {"type": "string"}}})
CLOCK = ToolDefinition("get_time", "Current time")
CALL = ToolCall("toolu_01", "get_weather", '{"city":"Paris"}')
#: A conversation two calls into a run: the question, a tool round, its result.
CONVERSATION = (LlmMessage.system("You are a weather bot."), LlmMessage.user("Paris?"),
                LlmMessage("assistant", "", tool_calls=(CALL,)),
                LlmMessage("tool", "18°C, sunny", tool_call_id="toolu_01"))
REQUEST = LlmRequest("claude-sonnet-4-5", CONVERSATION, tools=(WEATHER, CLOCK),
                     cache_key="thread-42")

# Anthropic's usage of a call that read the cached prefix and wrote the new part.
CACHED_USAGE = {"input_tokens": 21, "cache_creation_input_tokens": 188,
                "cache_read_input_tokens": 1800,
                "cache_creation": {"ephemeral_5m_input_tokens": 188,
                                   "ephemeral_1h_input_tokens": 0},
                "output_tokens": 15, "service_tier": "standard"}


def marked(blocks: list[dict[str, Any]]) -> list[int]:
    return [index for index, block in enumerate(blocks) if "cache_control" in block]


async def sent_to_anthropic(**options: Any) -> dict[str, Any]:
    script = Script([json_response(200, anthropic_message([text_block("Sunny.")]))])
    await AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client(),
                            **options).chat(REQUEST)
    body: dict[str, Any] = script.body()
    return body


async def test_anthropic_marks_the_tools_the_system_prompt_and_the_conversation() -> None:
    body = await sent_to_anthropic()
    assert marked(body["tools"]) == [1]
    assert body["system"] == [{"type": "text", "text": "You are a weather bot.",
                               "cache_control": EPHEMERAL}]
    first, answer, results = body["messages"]
    # The end of the previous call's conversation (before the latest answer), and the end.
    assert first["content"] == [{"type": "text", "text": "Paris?", "cache_control": EPHEMERAL}]
    assert marked(answer["content"]) == []
    assert results["content"][-1]["cache_control"] == EPHEMERAL


async def test_anthropic_never_marks_more_than_four_breakpoints() -> None:
    body = await sent_to_anthropic()
    blocks = [*body["tools"], *body["system"],
              *(block for message in body["messages"] for block in message["content"])]
    assert len(marked(blocks)) == MAX_BREAKPOINTS


def test_a_body_that_marks_its_own_breakpoints_is_left_as_it_is() -> None:
    body = {"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "Hi",
                                                      "cache_control": EPHEMERAL}],
            "messages": [{"role": "user", "content": "Hello"}]}
    assert with_breakpoints(body) == body


async def test_anthropic_prompt_caching_can_be_turned_off() -> None:
    body = await sent_to_anthropic(prompt_caching=False)
    assert body["system"] == "You are a weather bot."
    assert "cache_control" not in str(body)


async def test_anthropic_cache_reads_and_writes_are_in_the_usage() -> None:
    reply = anthropic_message([text_block("Sunny.")])
    reply["usage"] = CACHED_USAGE
    script = Script([json_response(200, reply)])
    provider = AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client())
    response = await provider.chat(REQUEST)
    assert (response.prompt_tokens, response.cache_read_tokens, response.cache_write_tokens) == (
        21 + 188 + 1800, 1800, 188)
    assert response.model == "claude-sonnet-4-5"


async def test_anthropic_streamed_cache_usage_comes_from_message_start() -> None:
    events = anthropic_events(["Sunny."])
    events[0]["message"]["usage"] = {**CACHED_USAGE, "output_tokens": 1}
    script = Script([sse_response(anthropic_sse(events))])
    provider = AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client())
    done = [chunk async for chunk in provider.stream_chat(REQUEST)][-1]
    assert (done.prompt_tokens, done.cache_read_tokens, done.cache_write_tokens) == (
        2009, 1800, 188)
    assert "cache_control" in str(script.body())


def cached_openai_usage(prompt: int, cached: int) -> dict[str, Any]:
    usage = openai_usage(prompt, 9)
    usage["prompt_tokens_details"]["cached_tokens"] = cached
    return usage


async def test_openai_sends_the_cache_key_and_reads_cached_tokens() -> None:
    completion = openai_completion("Sunny.")
    completion["usage"] = cached_openai_usage(2006, 1920)
    script = Script([json_response(200, completion)])
    provider = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                                  http_client=script.client())
    response = await provider.chat(REQUEST)
    assert script.body()["prompt_cache_key"] == "thread-42"
    assert (response.prompt_tokens, response.cache_read_tokens) == (2006, 1920)


async def test_openai_streamed_cached_tokens_come_with_the_usage_chunk() -> None:
    chunks = openai_stream(["Sunny."])
    chunks[-1]["usage"] = cached_openai_usage(2006, 1024)
    script = Script([sse_response(openai_sse(chunks))])
    provider = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                                  http_client=script.client())
    done = [chunk async for chunk in provider.stream_chat(REQUEST)][-1]
    assert (done.prompt_tokens, done.cache_read_tokens, done.model) == (2006, 1024, REQUEST.model)


async def test_a_long_cache_key_travels_as_its_digest_and_the_key_can_be_turned_off() -> None:
    long_key = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),), cache_key="t" * 200)
    script = Script([json_response(200, openai_completion("Hi")) for _ in range(2)])
    on = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                            http_client=script.client())
    off = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                             http_client=script.client(), prompt_cache_key=False)
    await on.chat(long_key)
    await off.chat(long_key)
    assert len(script.body(0)["prompt_cache_key"]) == 64
    assert "prompt_cache_key" not in script.body(1)
