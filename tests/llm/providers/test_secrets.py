"""API keys never show: not in reprs, errors, tracebacks or logs, even when a server echoes
them back."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.providers import AnthropicProvider, ClaudeProvider, OpenAIChatProvider, RetryPolicy
from bloge.llm.providers.http_client import ProviderHttpClient
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import (
    Script,
    anthropic_error,
    anthropic_message,
    json_response,
    openai_completion,
    openai_error,
    text_block,
)

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))


def openai(script: Script, sleeps: RecordedSleeps) -> Any:
    return OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                              organization="org-1", http_client=script.client(),
                              retry=RetryPolicy(max_attempts=2, jitter=False), sleep=sleeps)


def echo_openai(status: int) -> Any:
    return json_response(status, openai_error(
        f"Incorrect API key provided: {OPENAI_KEY}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.", "invalid_request_error",
        "invalid_api_key"))


def anthropic(script: Script, sleeps: RecordedSleeps) -> Any:
    return AnthropicProvider(api_key=ANTHROPIC_KEY, http_client=script.client(),
                             retry=RetryPolicy(max_attempts=2, jitter=False), sleep=sleeps)


def claude(script: Script, sleeps: RecordedSleeps) -> Any:
    return ClaudeProvider(anthropic(script, sleeps))


def echo_anthropic(status: int) -> Any:
    return json_response(status, anthropic_error("authentication_error",
                                                 f"invalid x-api-key: {ANTHROPIC_KEY}"))


def anthropic_ok() -> Any:
    return json_response(200, anthropic_message([text_block("Hi")]))


PROVIDERS = [
    pytest.param(openai, OPENAI_KEY, echo_openai,
                 lambda: json_response(200, openai_completion("Hi")), id="openai"),
    pytest.param(anthropic, ANTHROPIC_KEY, echo_anthropic, anthropic_ok, id="anthropic"),
    pytest.param(claude, ANTHROPIC_KEY, echo_anthropic, anthropic_ok, id="claude"),
]


def everything_about(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)) + repr(error) + repr(error.__cause__)


@pytest.mark.parametrize(("make", "key", "echo", "ok"), PROVIDERS)
def test_the_repr_leaves_the_key_out(make: Callable, key: str, echo: Callable, ok: Callable,
                                     sleeps: RecordedSleeps) -> None:
    assert key not in repr(make(Script([]), sleeps))


@pytest.mark.parametrize(("make", "key", "echo", "ok"), PROVIDERS)
async def test_a_key_echoed_in_an_error_body_is_redacted(
    make: Callable, key: str, echo: Callable, ok: Callable, sleeps: RecordedSleeps,
) -> None:
    with pytest.raises(ProviderError) as caught:
        await make(Script([echo(401)]), sleeps).chat(REQUEST)
    assert "***" in str(caught.value)
    assert key not in everything_about(caught.value)


@pytest.mark.parametrize(("make", "key", "echo", "ok"), PROVIDERS)
async def test_a_key_echoed_in_a_body_that_is_not_json_is_redacted(
    make: Callable, key: str, echo: Callable, ok: Callable, sleeps: RecordedSleeps,
) -> None:
    script = Script([httpx.Response(200, text=f"<html>bad key {key}</html>")])
    with pytest.raises(ProviderError, match="not a JSON object") as caught:
        await make(script, sleeps).chat(REQUEST)
    assert key not in everything_about(caught.value)


@pytest.mark.parametrize(("make", "key", "echo", "ok"), PROVIDERS)
async def test_retry_logs_leave_the_key_out(
    make: Callable, key: str, echo: Callable, ok: Callable, sleeps: RecordedSleeps,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    await make(Script([echo(429), ok()]), sleeps).chat(REQUEST)
    assert "retrying in 1.00s (attempt 1 of 2)" in caplog.text
    assert key not in caplog.text


@pytest.mark.parametrize(("make", "key", "echo", "ok"), PROVIDERS)
async def test_a_key_in_a_transport_error_is_redacted(
    make: Callable, key: str, echo: Callable, ok: Callable, sleeps: RecordedSleeps,
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ProxyError(f"proxy refused credentials {key}", request=request)

    with pytest.raises(ProviderError) as caught:
        await make(Script([refuse]), sleeps).chat(REQUEST)
    assert "proxy refused credentials ***" in str(caught.value)
    assert key not in everything_about(caught.value)


def test_the_http_shell_repr_leaves_the_headers_out(sleeps: RecordedSleeps) -> None:
    shell = ProviderHttpClient(
        provider="openai", base_url="https://api.openai.com/v1",
        headers={"Authorization": f"Bearer {OPENAI_KEY}"}, secrets=(OPENAI_KEY,), timeout=60.0,
        max_response_bytes=1_000_000, http_client=None, retry=RetryPolicy(), sleep=sleeps)
    assert repr(shell) == "ProviderHttpClient(provider='openai', base_url='https://api.openai.com/v1')"
