from __future__ import annotations

import pytest
from pydantic import ValidationError

from bloge_config import BlogeSettings, RetrySettings


def test_the_defaults_are_a_working_offline_application() -> None:
    settings = BlogeSettings()
    assert settings.llm.provider == "offline"
    assert settings.llm.openai.timeout == 60.0
    assert settings.llm.anthropic.max_tokens == 1024
    assert settings.llm.retry.on_http_codes == (408, 409, 429, 500, 502, 503, 504, 529)
    assert settings.llm.openai.api_key.get_secret_value() == ""
    assert settings.operators == {}
    assert settings.listeners == ()
    assert settings.event_journal.enabled is False


def test_fields_answer_to_snake_case_and_kebab_case_names() -> None:
    assert RetrySettings(max_attempts=2) == RetrySettings.model_validate({"max-attempts": 2})


def test_settings_are_frozen() -> None:
    settings = BlogeSettings()
    with pytest.raises(ValidationError, match="frozen"):
        settings.llm.provider = "openai"  # type: ignore[misc]  # the point: it is refused


def test_constructing_settings_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLOGE_LLM__PROVIDER", "anthropic")
    monkeypatch.setenv("LLM", '{"provider": "anthropic"}')
    assert BlogeSettings().llm.provider == "offline"
