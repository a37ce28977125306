"""Settings: ``settings.yaml``, profiles, environment variables and overrides, as pydantic models.

```python
from bloge_config import load_settings, effective_settings, settings_sources

settings = load_settings()                      # or load_settings(profile="prod", ...)
settings.llm.provider                           # "offline" | "openai" | "anthropic"
settings.llm.retry.initial_backoff              # durations are float seconds
effective_settings(settings)                    # plain data, secrets masked
settings_sources(settings)["bloge.llm.provider"]  # "environment variable BLOGE_LLM__PROVIDER"
```

Every problem in any source is a :class:`SettingsError` with a one-paragraph message. This
package imports only pydantic, pydantic-settings, PyYAML and the standard library.
"""

from bloge_config.errors import SettingsError
from bloge_config.fields import Duration, format_duration, parse_duration
from bloge_config.loading import load_settings, settings_file_path
from bloge_config.models import (
    AgentsSettings,
    AnthropicSettings,
    BlogeSettings,
    EventJournalSettings,
    LlmSettings,
    OfflineSettings,
    OpenAiSettings,
    Provider,
    RetrySettings,
)
from bloge_config.provenance import effective_settings, settings_sources

__all__ = [
    "AgentsSettings",
    "AnthropicSettings",
    "BlogeSettings",
    "Duration",
    "EventJournalSettings",
    "LlmSettings",
    "OfflineSettings",
    "OpenAiSettings",
    "Provider",
    "RetrySettings",
    "SettingsError",
    "effective_settings",
    "format_duration",
    "load_settings",
    "parse_duration",
    "settings_file_path",
    "settings_sources",
]
