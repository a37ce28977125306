"""Retries over HTTP, the same for every provider: which failures are retried, how long we
wait, and what is raised when we give up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.attempts import attempts_capped
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider, RetryPolicy
from bloge.llm.providers.retry import RetryNotice, observing_retries
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import (
    Script,
    anthropic_error,
    anthropic_events,
    anthropic_message,
    anthropic_sse,
    fail_with,
    json_response,
    openai_completion,
    openai_error,
    openai_sse,
    openai_stream,
    openai_text_delta,
    sse_response,
    text_block,
)

NO_JITTER = RetryPolicy(jitter=False)


@dataclass(frozen=True)
class Api:
    """What the tests need to know of one provider's API."""

    name: str
    make: Callable[..., Any]
    ok: Callable[[], httpx.Response]
    ok_stream: Callable[[], httpx.Response]
    error: Callable[[str, str], dict[str, Any]]
    request: LlmRequest


OPENAI = Api(
    "openai",
    lambda script, **o: OpenAIChatProvider(base_url="https://api.openai.com/v1",
                                           api_key=OPENAI_KEY, http_client=script.client(), **o),
    lambda: json_response(200, openai_completion("Hi")),
    lambda: sse_response(openai_sse(openai_stream(["Hi"]))),
    lambda kind, message: openai_error(message, kind),
    LlmRequest("gpt-4o", (LlmMessage.user("Hi"),)),
)
ANTHROPIC = Api(
    "anthropic",
    lambda script, **o: AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client(),
                                          **o),
    lambda: json_response(200, anthropic_message([text_block("Hi")])),
    lambda: sse_response(anthropic_sse(anthropic_events(["Hi"]))),
    anthropic_error,
    LlmRequest("claude-sonnet-4-5", (LlmMessage.user("Hi"),)),
)
APIS = [pytest.param(OPENAI, id="openai"), pytest.param(ANTHROPIC, id="anthropic")]


def failure(api: Api, status: int, message: str = "Try again later",
            headers: dict[str, str] | None = None) -> httpx.Response:
    return json_response(status, api.error("server_error", message), headers)


async def chat(api: Api, script: Script, sleeps: RecordedSleeps,
               policy: RetryPolicy = NO_JITTER) -> Any:
    return await api.make(script, retry=policy, sleep=sleeps).chat(api.request)


async def stream(api: Api, script: Script, sleeps: RecordedSleeps) -> list[Any]:
    chunks: AsyncIterator[Any] = api.make(script, retry=NO_JITTER, sleep=sleeps).stream_chat(
        api.request)
    return [c async for c in chunks]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_each_configured_status_is_retried(api: Api, status: int,
                                                 sleeps: RecordedSleeps) -> None:
    script = Script([failure(api, status), api.ok()])
    assert (await chat(api, script, sleeps)).content == "Hi"
    assert len(script.requests) == 2
    assert sleeps == [1.0]


@pytest.mark.parametrize("api", APIS)
async def test_waits_back_off_exponentially(api: Api, sleeps: RecordedSleeps) -> None:
    script = Script([failure(api, 503), failure(api, 503), failure(api, 503), api.ok()])
    await chat(api, script, sleeps)
    assert sleeps == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("api", APIS)
async def test_jittered_waits_stay_within_the_upper_half_of_the_backoff(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 503), failure(api, 503), api.ok()])
    await chat(api, script, sleeps, RetryPolicy())
    assert 0.5 <= sleeps[0] <= 1.0
    assert 1.0 <= sleeps[1] <= 2.0


@pytest.mark.parametrize("api", APIS)
async def test_retry_after_seconds_sets_the_wait(api: Api, sleeps: RecordedSleeps) -> None:
    script = Script([failure(api, 429, headers={"retry-after": "7"}), api.ok()])
    await chat(api, script, sleeps)
    assert sleeps == [7.0]


@pytest.mark.parametrize("api", APIS)
async def test_retry_after_ms_sets_the_wait(api: Api, sleeps: RecordedSleeps) -> None:
    script = Script([failure(api, 429, headers={"retry-after-ms": "1500", "retry-after": "2"}),
                     api.ok()])
    await chat(api, script, sleeps)
    assert sleeps == [1.5]


@pytest.mark.parametrize("api", APIS)
async def test_retry_after_as_a_far_http_date_is_capped(api: Api, sleeps: RecordedSleeps) -> None:
    headers = {"retry-after": "Fri, 31 Dec 2100 23:59:59 GMT"}
    script = Script([failure(api, 503, headers=headers), api.ok()])
    await chat(api, script, sleeps, RetryPolicy(jitter=False, max_retry_after=45.0))
    assert sleeps == [45.0]


async def test_anthropic_overloaded_is_retried_by_default(sleeps: RecordedSleeps) -> None:
    overloaded = json_response(529, anthropic_error("overloaded_error", "Overloaded"))
    script = Script([overloaded, ANTHROPIC.ok()])
    provider = AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client(), sleep=sleeps)
    assert (await provider.chat(ANTHROPIC.request)).content == "Hi"
    assert len(script.requests) == 2


@pytest.mark.parametrize("api", APIS)
async def test_a_retry_after_longer_than_the_time_left_fails_at_once(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 429, "Rate limited", headers={"retry-after": "45"}), api.ok()])
    with pytest.raises(ProviderError, match=(
        r"Rate limited.*; the server asked to wait 45 s before retrying, more than the "
        r"\d+\.\d s left of the call's total_timeout of 30 s \(gave up after 1 attempt\)$"
    )) as caught:
        await chat(api, script, sleeps, RetryPolicy(jitter=False, total_timeout=30.0))
    assert (caught.value.status_code, caught.value.retryable) == (429, True)
    assert (len(script.requests), sleeps) == (1, [])


@pytest.mark.parametrize("api", APIS)
async def test_a_retry_after_past_the_cap_is_not_waited_for_while_another_model_stands_by(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 429, "Rate limited", headers={"retry-after": "120"}),
                     api.ok()])
    with attempts_capped(2), pytest.raises(ProviderError, match=(
        r"Rate limited.*; the server asked to wait 120 s before retrying, more than "
        r"max_retry_after \(60 s\), and another model stands by \(gave up after 1 attempt\)$"
    )) as caught:
        await chat(api, script, sleeps, NO_JITTER)
    assert (caught.value.status_code, caught.value.retryable) == (429, True)
    assert (len(script.requests), sleeps) == (1, [])


@pytest.mark.parametrize("api", APIS)
async def test_a_backoff_longer_than_the_time_left_fails_at_once(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 503), failure(api, 503), api.ok()])
    with pytest.raises(ProviderError, match=(
        r"gave up after 1 attempt: the next attempt would start after the call's total_timeout "
        r"of 0\.5 s\)$")):
        await chat(api, script, sleeps, RetryPolicy(jitter=False, total_timeout=0.5))
    assert sleeps == []


@pytest.mark.parametrize("api", APIS)
async def test_without_a_total_timeout_long_waits_are_slept(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 429, headers={"retry-after": "3600"}), api.ok()])
    await chat(api, script, sleeps, RetryPolicy(jitter=False, total_timeout=None))
    assert sleeps == [60.0]


@pytest.mark.parametrize("api", APIS)
async def test_giving_up_raises_the_servers_message_with_status(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 500, "The server had an error processing your request.")] * 4)
    with pytest.raises(ProviderError) as caught:
        await chat(api, script, sleeps)
    error = caught.value
    assert (error.provider, error.status_code, error.retryable) == (api.name, 500, True)
    assert "The server had an error processing your request." in str(error)
    assert "gave up after 4 attempts" in str(error)
    assert sleeps == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_client_errors_fail_at_once(api: Api, status: int,
                                                sleeps: RecordedSleeps) -> None:
    script = Script([json_response(status, api.error("invalid_request_error", "Bad input"))])
    with pytest.raises(ProviderError) as caught:
        await chat(api, script, sleeps)
    assert (caught.value.status_code, caught.value.retryable) == (status, False)
    assert str(caught.value).startswith(f"{api.name} (HTTP {status}): Bad input")
    assert len(script.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("call", [chat, stream], ids=["whole", "streamed"])
async def test_a_404_names_the_url_it_asked(api: Api, call: Any, sleeps: RecordedSleeps) -> None:
    script = Script([json_response(404, api.error("not_found_error", "Not found"))])
    with pytest.raises(ProviderError) as caught:
        await call(api, script, sleeps)
    assert str(caught.value).endswith(f"; asked POST {script.requests[0].url}")
    assert "Not found" in str(caught.value)


@pytest.mark.parametrize("api", APIS)
async def test_an_error_body_that_is_not_json_is_quoted(api: Api, sleeps: RecordedSleeps) -> None:
    script = Script([httpx.Response(400, text="<html><body>Bad Request</body></html>")])
    with pytest.raises(ProviderError, match="<html><body>Bad Request</body></html>"):
        await chat(api, script, sleeps)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("error", [httpx.ConnectError, httpx.ReadError,
                                   httpx.RemoteProtocolError, httpx.ConnectTimeout,
                                   httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout])
async def test_connection_errors_and_timeouts_are_retried(
    api: Api, error: type[httpx.TransportError], sleeps: RecordedSleeps,
) -> None:
    script = Script([fail_with(error), api.ok()])
    assert (await chat(api, script, sleeps)).content == "Hi"
    assert sleeps == [1.0]


@pytest.mark.parametrize("api", APIS)
async def test_timeouts_to_the_end_raise_a_provider_error_from_the_timeout(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([fail_with(httpx.ReadTimeout, "The read operation timed out")] * 4)
    with pytest.raises(ProviderError, match="timed out") as caught:
        await chat(api, script, sleeps)
    assert caught.value.status_code is None
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)


@pytest.mark.parametrize("api", APIS)
async def test_a_connection_error_is_named_in_the_provider_error(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([fail_with(httpx.ConnectError, "[Errno 111] Connection refused")] * 4)
    with pytest.raises(ProviderError, match=r"ConnectError: \[Errno 111\] Connection refused"):
        await chat(api, script, sleeps)


@pytest.mark.parametrize("api", APIS)
async def test_a_transport_error_that_would_repeat_is_not_retried(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([fail_with(httpx.UnsupportedProtocol, "Request URL has an unsupported protocol")])
    with pytest.raises(ProviderError, match="unsupported protocol"):
        await chat(api, script, sleeps)
    assert sleeps == []


@pytest.mark.parametrize("api", APIS)
async def test_one_attempt_means_no_retry(api: Api, sleeps: RecordedSleeps) -> None:
    script = Script([failure(api, 503)])
    with pytest.raises(ProviderError) as caught:
        await chat(api, script, sleeps, RetryPolicy(max_attempts=1))
    assert "gave up" not in str(caught.value)
    assert sleeps == []


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_is_retried_when_it_fails_before_its_first_byte(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([failure(api, 429, headers={"retry-after": "3"}),
                     fail_with(httpx.ConnectError), api.ok_stream()])
    chunks = await stream(api, script, sleeps)
    assert chunks[-1].done
    assert sleeps == [3.0, 2.0]


@pytest.mark.parametrize("api", APIS)
async def test_every_attempt_of_a_stream_sends_the_same_json(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    asked = LlmRequest(api.request.model, (LlmMessage.user("Météo à Paris ?"),))
    script = Script([failure(api, 503), api.ok_stream()])
    chunks = api.make(script, retry=NO_JITTER, sleep=sleeps).stream_chat(asked)
    assert [c async for c in chunks][-1].done
    first, second = script.requests
    assert first.headers["content-type"] == second.headers["content-type"] == "application/json"
    assert first.content == second.content
    assert "Météo à Paris ?".encode() in first.content  # UTF-8, not \u escapes
    body = json.loads(first.content)
    assert body["stream"] is True
    assert "Météo à Paris ?" in json.dumps(body["messages"], ensure_ascii=False)


class StallingStream(httpx.AsyncByteStream):
    """A body whose first read times out."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise httpx.ReadTimeout("The read operation timed out")
        yield b""  # pragma: no cover - makes this an async generator


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_whose_first_read_times_out_is_retried(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    stalled = httpx.Response(200, headers={"content-type": "text/event-stream"},
                             stream=StallingStream())
    script = Script([stalled, api.ok_stream()])
    assert (await stream(api, script, sleeps))[-1].done
    assert len(script.requests) == 2


class BreakingStream(httpx.AsyncByteStream):
    """A body that delivers one event, then loses the connection."""

    def __init__(self, first: bytes) -> None:
        self.first = first

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        raise httpx.ReadError("Connection reset by peer")


async def test_a_stream_that_breaks_after_its_first_byte_is_not_retried(
    sleeps: RecordedSleeps,
) -> None:
    broken = httpx.Response(200, headers={"content-type": "text/event-stream"},
                            stream=BreakingStream(openai_sse([openai_text_delta("Hel")],
                                                             done=False)))
    script = Script([broken, OPENAI.ok_stream()])
    chunks = OPENAI.make(script, retry=NO_JITTER, sleep=sleeps).stream_chat(OPENAI.request)
    assert (await anext(chunks)).content == "Hel"
    with pytest.raises(ProviderError, match="stream broke off: ReadError") as caught:
        await anext(chunks)
    assert isinstance(caught.value.__cause__, httpx.ReadError)
    assert len(script.requests) == 1


@pytest.mark.parametrize("api", APIS)
async def test_a_json_error_in_answer_to_a_stream_request_is_not_retried(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    script = Script([json_response(200, api.error("invalid_request_error", "stream unsupported"))])
    with pytest.raises(ProviderError, match="stream unsupported"):
        await stream(api, script, sleeps)
    assert len(script.requests) == 1


async def test_the_same_request_body_is_sent_on_every_attempt(sleeps: RecordedSleeps) -> None:
    script = Script([failure(OPENAI, 503), OPENAI.ok()])
    await chat(OPENAI, script, sleeps)
    assert json.loads(script.requests[0].content) == json.loads(script.requests[1].content)


@pytest.mark.parametrize("api", APIS)
async def test_a_retry_observer_is_told_of_the_wait_and_its_reason(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    notices: list[RetryNotice] = []
    script = Script([failure(api, 429, "Rate limited", headers={"retry-after": "2"}), api.ok()])
    with observing_retries(notices.append):
        assert (await chat(api, script, sleeps)).content == "Hi"
    assert notices == [RetryNotice(api.name, 1, 4, 2.0, "HTTP 429", 429,
                                   notices[0].message)]
    assert "Rate limited" in notices[0].message


async def test_a_retry_observer_is_told_the_attempts_a_call_has_while_another_model_stands_by(
    sleeps: RecordedSleeps,
) -> None:
    notices: list[RetryNotice] = []
    with observing_retries(notices.append), attempts_capped(2):
        await chat(OPENAI, Script([failure(OPENAI, 503), OPENAI.ok()]), sleeps)
    assert [(notice.attempt, notice.max_attempts) for notice in notices] == [(1, 2)]


@pytest.mark.parametrize("api", APIS)
async def test_retries_outside_an_observed_context_tell_no_one(
    api: Api, sleeps: RecordedSleeps,
) -> None:
    notices: list[RetryNotice] = []
    with observing_retries(notices.append):
        pass
    await chat(api, Script([failure(api, 503), api.ok()]), sleeps)
    assert notices == []
