"""The settings that bound provider calls reach the providers the container builds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge_config import load_settings
from bloge_container.components import (
    anthropic_provider,
    openai_provider,
    record_provider_choice,
    retry_policy,
)
from bloge_container.report import ConditionsReport
from tests.llm.providers.paced_server import PacedServer, head
from tests.llm.providers.wire_payloads import (
    anthropic_message,
    json_response,
    openai_completion,
    text_block,
)
from tests.local_server import LocalServer


def test_the_default_retry_policy_retries_anthropic_overload_within_ten_minutes(
    project: Path,
) -> None:
    policy = retry_policy(load_settings(base_dir=project, environ={}))
    assert 529 in policy.retry_on_status
    assert policy.total_timeout == 600.0


def test_a_total_timeout_of_null_means_no_bound(project: Path) -> None:
    settings_file = project / "settings.yaml"
    settings_file.write_text(settings_file.read_text().replace(
        "total-timeout: 10m", "total-timeout: null"))
    assert retry_policy(load_settings(base_dir=project, environ={})).total_timeout is None


async def test_max_response_bytes_bounds_the_answers_of_the_provider(project: Path) -> None:
    body = json.dumps(anthropic_message([text_block("word " * 400)])).encode()
    with PacedServer([(head("application/json", length=len(body)) + body, 0.0)]) as server:
        settings = load_settings(base_dir=project, environ={"ANTHROPIC_API_KEY": "sk-ant-test"},
                                 overrides={"llm": {"anthropic": {
                                     "base-url": server.url, "max-response-bytes": "1KiB"}}})
        async with anthropic_provider(settings) as provider:
            with pytest.raises(ProviderError, match="larger than 1,024 bytes"):
                await provider.chat(LlmRequest("claude", (LlmMessage.user("Hi"),)))


def completion(request: httpx.Request) -> httpx.Response:
    return json_response(200, openai_completion("Hello"))


@pytest.mark.parametrize(("overrides", "connections"), [
    ({"server": {"max-concurrent-runs": 1}}, 1),
    ({"server": {"max-concurrent-runs": 1}, "llm": {"openai": {"max-connections": 2}}}, 2),
], ids=["follows-max-concurrent-runs", "max-connections"])
async def test_the_connection_pool_of_the_provider_follows_the_settings(
    project: Path, overrides: dict[str, dict[str, object]], connections: int,
) -> None:
    with LocalServer(completion) as server:
        overrides.setdefault("llm", {}).setdefault("openai", {})["base-url"] = server.url("/v1")
        settings = load_settings(base_dir=project, environ={"OPENAI_API_KEY": "sk-test"},
                                 overrides=overrides)
        async with openai_provider(settings) as provider:
            request = LlmRequest("gpt-4o", (LlmMessage.user("Hi"),))
            await asyncio.gather(*(provider.chat(request) for _ in range(3)))
    assert server.opened == connections


def test_bloge_config_says_how_the_pool_is_sized(project: Path) -> None:
    report = ConditionsReport()
    settings = load_settings(base_dir=project, environ={"BLOGE_LLM__PROVIDER": "anthropic"},
                             overrides={"server": {"max-concurrent-runs": 200}})
    record_provider_choice(settings, report)
    assert report.find("LlmConnectionPool[anthropic]").reason == (
        "at most 200 connections (bloge.llm.anthropic.max-connections unset: "
        "bloge.server.max-concurrent-runs), 200 kept alive")
