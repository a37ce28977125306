"""Settings: ``settings.yaml``, profiles, environment variables and overrides, as pydantic models.

This package imports only pydantic, pydantic-settings, PyYAML and the standard library.
"""

from config.errors import SettingsError
from config.fields import Duration, format_duration, parse_duration
from config.models import (
    AgentsSettings,
    AnthropicSettings,
    BlogeSettings,
    EventJournalSettings,
    LlmSettings,
    OpenAiSettings,
    Provider,
    RetrySettings,
)

__all__ = [
    "AgentsSettings",
    "AnthropicSettings",
    "BlogeSettings",
    "Duration",
    "EventJournalSettings",
    "LlmSettings",
    "OpenAiSettings",
    "Provider",
    "RetrySettings",
    "SettingsError",
    "format_duration",
    "parse_duration",
]
