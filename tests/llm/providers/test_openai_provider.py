"""OpenAIChatProvider over HTTP: what goes on the wire and what comes back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, ToolCall, ToolDefinition
from bloge.llm.chunks import join_chunks
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy
from tests.llm.providers.conftest import OPENAI_KEY
from tests.llm.providers.wire_payloads import (
    Script,
    WireCall,
    fail_with,
    json_response,
    openai_chunk,
    openai_completion,
    openai_error,
    openai_sse,
    openai_stream,
    openai_text_delta,
    sse_response,
)

BASE_URL = "https://api.openai.com/v1"
WEATHER = ToolDefinition("get_weather", "Current weather",
                         {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]})
REQUEST = LlmRequest("gpt-4o", (LlmMessage.system("Be brief."), LlmMessage.user("Weather in Paris?")),
                     temperature=0.0, tools=(WEATHER,), tool_choice="auto")


def provider(script: Script, **options: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(base_url=BASE_URL, api_key=OPENAI_KEY,
                              http_client=script.client(), **options)


async def collect(chunks: AsyncIterator[LlmChunk]) -> list[LlmChunk]:
    return [c async for c in chunks]


async def test_chat_posts_the_request_to_chat_completions() -> None:
    script = Script([json_response(200, openai_completion("Sunny."))])
    await provider(script, organization="org-42").chat(REQUEST)
    [sent] = script.requests
    assert (sent.method, str(sent.url)) == ("POST", "https://api.openai.com/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.headers["openai-organization"] == "org-42"
    assert sent.headers["content-type"] == "application/json"
    assert script.body() == {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Weather in Paris?"}],
        "temperature": 0.0,
        "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}],
        "tool_choice": "auto",
    }


async def test_a_trailing_slash_on_the_base_url_is_harmless() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    await OpenAIChatProvider(base_url="http://localhost:11434/v1/", api_key="",
                             http_client=script.client()).chat(REQUEST)
    assert str(script.requests[0].url) == "http://localhost:11434/v1/chat/completions"


async def test_without_an_organization_no_organization_header_is_sent() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    await provider(script).chat(REQUEST)
    assert "openai-organization" not in script.requests[0].headers


async def test_an_empty_api_key_sends_no_authorization_for_local_servers() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    await OpenAIChatProvider(base_url="http://localhost:11434/v1", api_key="",
                             http_client=script.client()).chat(REQUEST)
    assert "authorization" not in script.requests[0].headers


async def test_extra_headers_go_with_every_request() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    await provider(script, headers={"X-Tenant": "acme"}).chat(REQUEST)
    assert script.requests[0].headers["x-tenant"] == "acme"


async def test_a_plain_answer_comes_back_with_finish_reason_and_usage() -> None:
    script = Script([json_response(200, openai_completion("Sunny, 21 °C.", prompt=31, completion=8))])
    response = await provider(script).chat(REQUEST)
    assert (response.content, response.finish_reason) == ("Sunny, 21 °C.", "stop")
    assert (response.prompt_tokens, response.completion_tokens) == (31, 8)


async def test_an_answer_without_usage_says_its_usage_was_not_reported() -> None:
    body = openai_completion("Sunny.")
    del body["usage"]  # as some OpenAI-compatible servers answer
    response = await provider(Script([json_response(200, body)])).chat(REQUEST)
    assert (response.usage_reported, response.total_tokens) == (False, 0)


async def test_a_stream_without_a_usage_chunk_joins_with_usage_not_reported() -> None:
    chunks = openai_stream(["Sun", "ny."])[:-1]  # llama.cpp's servers may send no usage chunk
    streamed = await collect(provider(Script([sse_response(openai_sse(chunks))])).stream_chat(
        REQUEST))
    assert join_chunks(streamed).usage_reported is False


async def test_a_single_tool_call_comes_back() -> None:
    call = WireCall("call_Ijs1", "get_weather", ('{"city":"Paris"}',))
    script = Script([json_response(200, openai_completion(None, calls=[call],
                                                          finish_reason="tool_calls"))])
    response = await provider(script).chat(REQUEST)
    assert response.tool_calls == (ToolCall("call_Ijs1", "get_weather", '{"city":"Paris"}'),)
    assert (response.content, response.finish_reason) == ("", "tool_calls")


async def test_parallel_tool_calls_come_back_in_order() -> None:
    calls = [WireCall("call_1", "get_weather", ('{"city":"Paris"}',)),
             WireCall("call_2", "get_weather", ('{"city":"Rome"}',))]
    script = Script([json_response(200, openai_completion(None, calls=calls,
                                                          finish_reason="tool_calls"))])
    response = await provider(script).chat(REQUEST)
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("call_1", '{"city":"Paris"}'), ("call_2", '{"city":"Rome"}')]


async def test_streaming_asks_for_an_event_stream_with_usage() -> None:
    script = Script([sse_response(openai_sse(openai_stream(["Hi"])))])
    await collect(provider(script).stream_chat(REQUEST))
    assert script.requests[0].headers["accept"] == "text/event-stream"
    assert script.body()["stream"] is True
    assert script.body()["stream_options"] == {"include_usage": True}


async def test_streamed_text_arrives_in_pieces_then_done_with_usage() -> None:
    script = Script([sse_response(openai_sse(openai_stream(["Sun", "ny."], prompt=31, completion=3)))])
    chunks = await collect(provider(script).stream_chat(REQUEST))
    assert chunks == [LlmChunk("Sun"), LlmChunk("ny."),
                      LlmChunk(done=True, finish_reason="stop", prompt_tokens=31,
                               completion_tokens=3, model="gpt-4o")]


async def test_streamed_tool_calls_survive_any_read_boundaries() -> None:
    calls = [WireCall("call_1", "get_weather", ('{"ci', 'ty":"Pa', 'ris"}')),
             WireCall("call_2", "get_weather", ('{"city":"Zürich"}',))]
    body = openai_sse(openai_stream(["Checking…"], calls=calls, prompt=40, completion=30))
    script = Script([sse_response(body, piece=7)])
    chunks = await collect(provider(script).stream_chat(REQUEST))
    assert chunks == [
        LlmChunk("Checking…"),
        LlmChunk(tool_call=ToolCall("call_1", "get_weather", '{"city":"Paris"}')),
        LlmChunk(tool_call=ToolCall("call_2", "get_weather", '{"city":"Zürich"}')),
        LlmChunk(done=True, finish_reason="tool_calls", prompt_tokens=40, completion_tokens=30,
                 model="gpt-4o"),
    ]


async def test_a_stream_that_finished_without_done_marker_still_completes() -> None:
    body = openai_sse([openai_text_delta("Hi"), openai_chunk({}, finish_reason="stop")], done=False)
    chunks = await collect(provider(Script([sse_response(body)])).stream_chat(REQUEST))
    assert chunks[-1] == LlmChunk(done=True, finish_reason="stop", model="gpt-4o")


async def test_a_stream_cut_before_its_finish_reason_is_a_provider_error() -> None:
    body = openai_sse([openai_text_delta("Hi")], done=False)
    with pytest.raises(ProviderError, match="ended before the answer was complete"):
        await collect(provider(Script([sse_response(body)])).stream_chat(REQUEST))


async def test_an_error_payload_in_the_stream_is_a_provider_error() -> None:
    body = openai_sse([openai_text_delta("Hi"),
                       {"error": {"message": "The server had an error", "type": "server_error"}}])
    with pytest.raises(ProviderError, match="The server had an error") as caught:
        await collect(provider(Script([sse_response(body)])).stream_chat(REQUEST))
    assert caught.value.provider == "openai"


async def test_an_event_that_is_not_json_is_a_provider_error() -> None:
    body = b"data: {not json\n\n"
    with pytest.raises(ProviderError, match="not JSON"):
        await collect(provider(Script([sse_response(body)])).stream_chat(REQUEST))


async def test_a_response_without_choices_is_a_provider_error() -> None:
    body = openai_completion("Hi")
    body["choices"] = []
    with pytest.raises(ProviderError, match="no choices"):
        await provider(Script([json_response(200, body)])).chat(REQUEST)


async def test_a_response_that_is_not_json_is_a_provider_error() -> None:
    script = Script([httpx.Response(200, text="<html>maintenance</html>")])
    with pytest.raises(ProviderError, match="not a JSON object: <html>maintenance</html>"):
        await provider(script).chat(REQUEST)


class EndlessStream(httpx.AsyncByteStream):
    """A response body that never ends, and remembers whether it was closed."""

    def __init__(self) -> None:
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            yield openai_sse([openai_text_delta("la ")], done=False)

    async def aclose(self) -> None:
        self.closed = True


async def test_a_whole_completion_answering_a_streaming_request_says_the_server_did_not_stream(
) -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    with pytest.raises(ProviderError, match=r"answered a streaming request with JSON, not an "
                                            r"event stream .*\"choices\""):
        await collect(provider(script).stream_chat(REQUEST))


async def test_an_error_in_a_200_answering_a_streaming_request_is_its_message() -> None:
    body = {"error": {"message": "model overloaded", "type": "server_error"}}
    with pytest.raises(ProviderError, match=r"^openai: .*model overloaded") as caught:
        await collect(provider(Script([json_response(200, body)])).stream_chat(REQUEST))
    assert "event stream" not in str(caught.value)


async def test_closing_a_stream_early_closes_the_response() -> None:
    body = EndlessStream()
    script = Script([httpx.Response(200, headers={"content-type": "text/event-stream"},
                                    stream=body)])
    chunks = provider(script).stream_chat(REQUEST)
    assert (await anext(chunks)).content == "la "
    await chunks.aclose()
    assert body.closed


async def test_aclose_leaves_an_injected_client_open() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    client = script.client()
    async with OpenAIChatProvider(base_url=BASE_URL, api_key=OPENAI_KEY, http_client=client):
        pass
    assert not client.is_closed
    await client.aclose()


async def test_the_provider_max_tokens_bounds_a_request_that_sets_none() -> None:
    script = Script([json_response(200, openai_completion("Hi"))])
    await provider(script, max_tokens=64).chat(REQUEST)
    assert script.body()["max_tokens"] == 64


async def test_a_refused_request_is_kept_in_the_error_without_the_key() -> None:
    refused = json_response(400, openai_error("bad message", "invalid_request_error"))
    leaky = LlmRequest("gpt-4o", (LlmMessage.user(f"my key is {OPENAI_KEY}"),))
    with pytest.raises(ProviderError) as caught:
        await provider(Script([refused])).chat(leaky)
    assert caught.value.request is not None
    assert caught.value.request.startswith('{"model":"gpt-4o","messages":[{"role":"user"')
    assert OPENAI_KEY not in caught.value.request
    assert "bad message" in str(caught.value)
    assert "messages" not in str(caught.value)


async def test_a_refused_streaming_request_is_kept_in_the_error() -> None:
    refused = json_response(400, openai_error("bad message", "invalid_request_error"))
    with pytest.raises(ProviderError) as caught:
        await collect(provider(Script([refused])).stream_chat(REQUEST))
    assert caught.value.request is not None
    assert '"stream":true' in caught.value.request


async def test_a_long_refused_request_is_cut_keeping_its_start_and_end() -> None:
    refused = json_response(400, openai_error("too long", "invalid_request_error"))
    long = LlmRequest("gpt-4o", (LlmMessage.user("x" * 50_000), LlmMessage.user("the end")))
    with pytest.raises(ProviderError) as caught:
        await provider(Script([refused])).chat(long)
    kept = caught.value.request
    assert kept is not None
    assert len(kept) < 5_000
    assert kept.startswith('{"model":"gpt-4o"')
    assert "characters left out" in kept
    assert kept.endswith('"the end"}]}')


async def test_a_connection_failure_has_no_refused_request() -> None:
    script = Script([fail_with(httpx.ConnectError, "refused")])
    with pytest.raises(ProviderError) as caught:
        await provider(script, retry=RetryPolicy(max_attempts=1)).chat(REQUEST)
    assert caught.value.request is None
