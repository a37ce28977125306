"""``timeout`` bounds a whole JSON answer and each wait of a stream (its first byte, each next
line), against real servers on 127.0.0.1 that trickle or pause their answers (a per-read
timeout never fires for a trickle); a stream's opening is bounded as a whole by the call's
``total_timeout`` only.

The servers pause between bytes; the tests never wait for anything but the provider, and they
end quickly because the timeout under test cuts the answer short.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy
from tests.llm.providers.conftest import OPENAI_KEY, RecordedSleeps
from tests.llm.providers.paced_server import PacedServer, Script, head, trickled
from tests.llm.providers.wire_payloads import openai_completion, openai_sse, openai_stream

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))
ONCE = RetryPolicy(max_attempts=1)
GAP = 0.05
COMPLETION = json.dumps(openai_completion("Hi")).encode()
SSE = "text/event-stream"


def provider(server: PacedServer, *, timeout: float | httpx.Timeout = 0.3,
             retry: RetryPolicy = ONCE, **options: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(base_url=server.url, api_key=OPENAI_KEY, timeout=timeout,
                              retry=retry, **options)


async def chat_error(script: Script, **options: Any) -> ProviderError:
    with PacedServer(script) as server:
        async with provider(server, **options) as openai:
            with pytest.raises(ProviderError) as caught:
                await openai.chat(REQUEST)
    return caught.value


async def stream_error(script: Script, **options: Any) -> ProviderError:
    with PacedServer(script) as server:
        async with provider(server, **options) as openai:
            with pytest.raises(ProviderError) as caught:
                _ = [chunk async for chunk in openai.stream_chat(REQUEST)]
    return caught.value


async def test_a_json_answer_trickled_past_the_timeout_fails_with_a_timeout() -> None:
    script = [(head("application/json", length=len(COMPLETION)), 0.0),
              *trickled(COMPLETION, GAP)]
    error = await chat_error(script)
    assert "timed out after 0.3 s without a complete response" in str(error)
    assert error.status_code is None


async def test_an_attempt_cut_short_by_the_timeout_is_retried(sleeps: RecordedSleeps) -> None:
    script = [(head("application/json", length=len(COMPLETION)), 0.0),
              *trickled(COMPLETION, GAP)]
    with PacedServer(script) as server:
        async with provider(server, retry=RetryPolicy(max_attempts=2, jitter=False),
                            sleep=sleeps) as openai:
            with pytest.raises(ProviderError, match="gave up after 2 attempts") as caught:
                await openai.chat(REQUEST)
        assert server.connections == 2
    assert caught.value.retryable


async def test_an_httpx_timeout_bounds_an_attempt_by_its_largest_value() -> None:
    script = [(head("application/json", length=len(COMPLETION)), 0.0),
              *trickled(COMPLETION, GAP)]
    error = await chat_error(script, timeout=httpx.Timeout(0.2, read=0.4))
    assert "timed out after 0.4 s" in str(error)


async def test_a_stream_whose_headers_trickle_is_cut_short_by_the_total_timeout() -> None:
    policy = RetryPolicy(max_attempts=1, total_timeout=0.5)
    error = await stream_error(trickled(head(SSE), GAP), retry=policy)
    assert "no answer within the call's total_timeout of 0.5 s" in str(error)


async def test_a_stream_whose_first_byte_does_not_come_within_the_timeout_fails() -> None:
    error = await stream_error([(head(SSE), 30.0), (b"data: [DONE]\n\n", 0.0)])
    assert "timed out (ReadTimeout" in str(error)
    assert error.retryable


async def test_a_stream_opened_in_steps_longer_than_the_timeout_in_all_is_relayed() -> None:
    # Answering late and then sending the first event late, each within the timeout: a server
    # whose event loop is behind does so (thousands of streams on one worker).
    words = ["late ", "but ", "whole"]
    script = [(b"", 0.6), (head(SSE), 0.6), (openai_sse(openai_stream(words)), 0.0)]
    with PacedServer(script) as server:
        async with provider(server, timeout=1.0) as openai:
            chunks = [chunk async for chunk in openai.stream_chat(REQUEST)]
    assert "".join(c.content for c in chunks) == "".join(words)


async def test_a_stream_that_trickles_without_ending_a_line_fails_with_a_timeout() -> None:
    script = [(head(SSE) + b'data: {"choices": [', 0.0), *trickled(b" " * 300, GAP)]
    error = await stream_error(script)
    assert "the stream timed out: no complete line in 0.3 s" in str(error)


async def test_a_stream_lasts_longer_than_the_timeout_while_its_lines_keep_coming() -> None:
    words = [f"w{n} " for n in range(6)]
    events = openai_sse(openai_stream(words)).split(b"\n\n")
    script = [(head(SSE), 0.0), *((event + b"\n\n", GAP) for event in events if event)]
    with PacedServer(script) as server:
        async with provider(server) as openai:
            chunks = [chunk async for chunk in openai.stream_chat(REQUEST)]
    assert "".join(c.content for c in chunks) == "".join(words)


async def test_the_total_timeout_cuts_a_call_short_across_its_attempts(
    sleeps: RecordedSleeps,
) -> None:
    script = [(head("application/json", length=len(COMPLETION)), 0.0),
              *trickled(COMPLETION, GAP)]
    policy = RetryPolicy(max_attempts=10, jitter=False, initial_backoff=0.0, total_timeout=0.5)
    error = await chat_error(script, timeout=0.2, retry=policy, sleep=sleeps)
    assert "no answer within the call's total_timeout of 0.5 s" in str(error)
    assert error.retryable
