"""Settings: ``settings.yaml``, profiles, environment variables and overrides, as pydantic models.

```python
from bloge_config import load_settings, load_settings_with_sources, effective_settings

settings = load_settings()                      # or load_settings(profile="prod", ...)
settings.llm.provider                           # "offline" | "openai" | "anthropic"
settings.llm.retry.initial_backoff              # durations are float seconds
effective_settings(settings)                    # plain data, secrets masked
loaded = load_settings_with_sources()           # the settings and, beside them, their sources
loaded.sources["bloge.llm.provider"]            # "environment variable BLOGE_LLM__PROVIDER"
```

Every setting, with its type, default, variable and meaning, is listed by
:func:`bloge_config.reference.settings_reference` (``bloge config --reference``,
``docs/settings.md``). Every problem in any source is a :class:`SettingsError` with a
one-paragraph message. This package imports only pydantic, PyYAML and the standard library.
"""

from bloge_config.errors import SettingsError
from bloge_config.fields import Duration, format_duration, parse_duration
from bloge_config.loading import load_settings, load_settings_with_sources, settings_file_path
from bloge_config.models import (
    AgentsSettings,
    AnthropicSettings,
    AutopilotSettings,
    BlogeSettings,
    EventJournalSettings,
    GuardsSettings,
    LlmSettings,
    OfflineSettings,
    OpenAiSettings,
    Provider,
    RetrySettings,
    ServerSettings,
    StoreSettings,
)
from bloge_config.provenance import LoadedSettings, effective_settings

__all__ = [
    "AgentsSettings",
    "AnthropicSettings",
    "AutopilotSettings",
    "BlogeSettings",
    "Duration",
    "EventJournalSettings",
    "GuardsSettings",
    "LlmSettings",
    "LoadedSettings",
    "OfflineSettings",
    "OpenAiSettings",
    "Provider",
    "RetrySettings",
    "ServerSettings",
    "SettingsError",
    "StoreSettings",
    "effective_settings",
    "format_duration",
    "load_settings",
    "load_settings_with_sources",
    "parse_duration",
    "settings_file_path",
]
