"""The settings that bound provider calls reach the providers the container builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bloge.core import ProviderError
from bloge.llm import LlmMessage, LlmRequest
from bloge_config import load_settings
from bloge_container.components import anthropic_provider, retry_policy
from tests.llm.providers.paced_server import PacedServer, head
from tests.llm.providers.wire_payloads import anthropic_message, text_block


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
