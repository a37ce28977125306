"""What a provider does with a body it must not trust: longer than ``max_response_bytes``, or
not UTF-8. Both fail the call with a message saying so, for JSON answers and for streams."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx
import pytest

from bloge.core import BlogeUsageError, ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import (
    anthropic_events,
    anthropic_sse,
    openai_completion,
    openai_sse,
    openai_stream,
    openai_text_delta,
)

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))
LIMIT = 4096


async def reads(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


def answering(response: httpx.Response) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(lambda request: response))


def openai(response: httpx.Response, sleeps: RecordedSleeps, **options: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                              http_client=answering(response), sleep=sleeps, **options)


def json_body(body: bytes | AsyncIterator[bytes], **headers: str) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "application/json", **headers},
                          content=body)


def sse_body(pieces: Iterable[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"},
                          content=reads(pieces))


async def chat_error(response: httpx.Response, sleeps: RecordedSleeps) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await openai(response, sleeps, max_response_bytes=LIMIT).chat(REQUEST)
    return caught.value


async def stream_error(response: httpx.Response, sleeps: RecordedSleeps) -> ProviderError:
    provider = openai(response, sleeps, max_response_bytes=LIMIT)
    with pytest.raises(ProviderError) as caught:
        _ = [chunk async for chunk in provider.stream_chat(REQUEST)]
    return caught.value


def long_completion() -> bytes:
    return json.dumps(openai_completion("word " * LIMIT)).encode()


async def test_a_json_body_past_the_limit_fails_without_a_retry(sleeps: RecordedSleeps) -> None:
    body = long_completion()
    error = await chat_error(json_body(reads(body[i : i + 512] for i in range(0, len(body), 512))),
                             sleeps)
    assert str(error) == "openai: the response is larger than 4,096 bytes (max_response_bytes)"
    assert sleeps == []


async def test_a_json_body_declared_past_the_limit_fails_before_it_is_read(
    sleeps: RecordedSleeps,
) -> None:
    read: list[bytes] = []

    async def recorded() -> AsyncIterator[bytes]:
        for piece in (long_completion(),):
            read.append(piece)
            yield piece

    response = json_body(recorded(), **{"content-length": str(len(long_completion()))})
    error = await chat_error(response, sleeps)
    assert "larger than 4,096 bytes" in str(error)
    assert read == []


async def test_a_json_body_within_the_limit_is_answered(sleeps: RecordedSleeps) -> None:
    body = json.dumps(openai_completion("Hi")).encode()
    provider = openai(json_body(body), sleeps, max_response_bytes=len(body))
    assert (await provider.chat(REQUEST)).content == "Hi"


async def test_an_error_body_past_the_limit_fails_with_the_limit(sleeps: RecordedSleeps) -> None:
    response = httpx.Response(502, headers={"content-type": "text/html"},
                              content=reads([b"<p>Bad gateway</p>" * 100] * 10))
    error = await chat_error(response, sleeps)
    assert "larger than 4,096 bytes" in str(error)


async def test_a_stream_past_the_limit_fails(sleeps: RecordedSleeps) -> None:
    events = openai_sse([openai_text_delta("word ") for _ in range(200)], done=False)
    error = await stream_error(sse_body(events[i : i + 300] for i in range(0, len(events), 300)),
                               sleeps)
    assert str(error) == "openai: the response is larger than 4,096 bytes (max_response_bytes)"
    assert not error.retryable


async def test_one_endless_stream_line_fails_past_the_limit(sleeps: RecordedSleeps) -> None:
    error = await stream_error(sse_body([b'data: {"choices": [', *[b" " * 1024] * 8]), sleeps)
    assert "larger than 4,096 bytes" in str(error)


def test_a_limit_below_one_byte_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="max_response_bytes must be >= 1, got 0"):
        AnthropicProvider(api_key=ANTHROPIC_KEY, max_response_bytes=0)


async def test_a_json_body_that_is_not_utf8_says_where(sleeps: RecordedSleeps) -> None:
    body = b'{"id": "chatcmpl-1", "caf\xe9": 1}'
    error = await chat_error(json_body(body), sleeps)
    assert str(error) == "openai: the response is not valid UTF-8 (byte 0xe9 at offset 25)"
    assert sleeps == []


async def test_a_stream_that_is_not_utf8_says_where_counting_from_its_first_byte(
    sleeps: RecordedSleeps,
) -> None:
    first = openai_sse([openai_text_delta("Hi")], done=False)
    # A two-byte character split between reads, whose second half is no continuation byte.
    error = await stream_error(sse_body([first, b'data: {"x": "\xc3', b'(x"}\n\n']), sleeps)
    offset = len(first) + len(b'data: {"x": "')
    assert str(error) == f"openai: the response is not valid UTF-8 (byte 0xc3 at offset {offset})"


async def test_a_stream_cut_inside_a_character_is_not_utf8(sleeps: RecordedSleeps) -> None:
    error = await stream_error(sse_body([b'data: {"x": "\xe2\x82']), sleeps)
    assert "not valid UTF-8 (byte 0xe2 at offset 13)" in str(error)


async def test_characters_split_between_reads_are_decoded_whole(sleeps: RecordedSleeps) -> None:
    body = anthropic_sse(anthropic_events(["héllo ", "wörld ✓"]))
    response = httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=reads(body[i : i + 1] for i in range(len(body))))
    provider = AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=answering(response),
                                 sleep=sleeps)
    chunks = [chunk async for chunk in provider.stream_chat(REQUEST)]
    assert "".join(c.content for c in chunks) == "héllo wörld ✓"


async def test_a_stream_within_the_limit_is_answered(sleeps: RecordedSleeps) -> None:
    body = openai_sse(openai_stream(["Hi"]))
    provider = openai(sse_body([body]), sleeps, max_response_bytes=len(body))
    chunks = [chunk async for chunk in provider.stream_chat(REQUEST)]
    assert (chunks[0].content, chunks[-1].done) == ("Hi", True)
