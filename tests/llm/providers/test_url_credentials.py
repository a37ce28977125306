"""Credentials inside a base URL (a proxy's user-info, an ``api-key`` query parameter) never
show in a provider's repr or errors."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider, RetryPolicy
from bloge.llm.providers.http_client import ProviderHttpClient
from tests.llm.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import Script, fail_with, json_response, openai_error

REQUEST = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))
PROXY = "https://ada:PROXY-PW@proxy.example/v1?api-key=QUERY-KEY"
SHOWN = "https://ada:****@proxy.example/v1?api-key=****"


def openai(script: Script, sleeps: RecordedSleeps) -> Any:
    return OpenAIChatProvider(base_url=PROXY, api_key=OPENAI_KEY, http_client=script.client(),
                              retry=RetryPolicy(max_attempts=1), sleep=sleeps)


def anthropic(script: Script, sleeps: RecordedSleeps) -> Any:
    return AnthropicProvider(base_url=PROXY, api_key=ANTHROPIC_KEY, http_client=script.client(),
                             retry=RetryPolicy(max_attempts=1), sleep=sleeps)


PROVIDERS = [pytest.param(openai, id="openai"), pytest.param(anthropic, id="anthropic")]


def everything_about(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)) + repr(error) + repr(error.__cause__)


@pytest.mark.parametrize("make", PROVIDERS)
def test_the_repr_masks_credentials_in_the_base_url(make: Callable[..., Any],
                                                   sleeps: RecordedSleeps) -> None:
    provider = make(Script([]), sleeps)
    assert SHOWN in repr(provider)


def test_the_http_shell_repr_masks_credentials_in_the_base_url(sleeps: RecordedSleeps) -> None:
    shell = ProviderHttpClient(
        provider="openai", base_url=PROXY, headers={}, secrets=(), timeout=60.0,
        max_response_bytes=1_000_000, http_client=None, retry=RetryPolicy(), sleep=sleeps)
    assert repr(shell) == f"ProviderHttpClient(provider='openai', base_url={SHOWN!r})"


@pytest.mark.parametrize("make", PROVIDERS)
async def test_a_transport_error_masks_credentials_in_the_base_url(
    make: Callable[..., Any], sleeps: RecordedSleeps,
) -> None:
    script = Script([fail_with(httpx.ConnectError, f"cannot reach {PROXY}")])
    with pytest.raises(ProviderError) as caught:
        await make(script, sleeps).chat(REQUEST)
    assert SHOWN in str(caught.value)
    for secret in ("PROXY-PW", "QUERY-KEY"):
        assert secret not in everything_about(caught.value)


async def test_a_server_message_quoting_a_credential_is_masked(sleeps: RecordedSleeps) -> None:
    body = openai_error("upstream https://svc:UP-PW@10.0.0.7 refused Authorization: Bearer "
                        "tok-42", "invalid_request_error", "bad_gateway")
    with pytest.raises(ProviderError) as caught:
        await openai(Script([json_response(400, body)]), sleeps).chat(REQUEST)
    assert "https://svc:****@10.0.0.7" in str(caught.value)
    for secret in ("UP-PW", "tok-42"):
        assert secret not in everything_about(caught.value)
