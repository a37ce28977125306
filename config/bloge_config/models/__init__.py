"""The settings sections, one model per section of ``settings.yaml``, one module per section.

Field names are snake_case; each also answers to its kebab-case alias (``max_attempts`` and
``max-attempts``), which is also how the models dump with ``by_alias=True``. Every field has a
default (but for the bounds of an autopilot knob), so an empty settings file gives a working
offline application, and a one-line description, which ``bloge config --reference`` prints.
Durations are ``float`` seconds (see :mod:`bloge_config.fields`). Models are frozen; treat the
dicts inside them as read-only. Their reprs, like their JSON, never show a secret: API keys
are ``SecretStr`` and URLs have the credentials of their user-info masked.
"""

from bloge_config.models.a2a import A2aRemoteSettings, A2aSettings
from bloge_config.models.agents import AgentsSettings
from bloge_config.models.approvals import ApprovalsSettings
from bloge_config.models.autopilot import (
    AutopilotSettings,
    ErrorRateWatchSettings,
    KnobSettings,
)
from bloge_config.models.guards import GuardsSettings
from bloge_config.models.journal import EventJournalSettings
from bloge_config.models.llm import (
    AnthropicSettings,
    LlmSettings,
    OfflineSettings,
    OpenAiSettings,
    Provider,
    RetrySettings,
)
from bloge_config.models.mcp import McpServerSettings, McpSettings
from bloge_config.models.rpc import (
    RpcRepliesSettings,
    RpcRetrySettings,
    RpcServiceSettings,
    RpcSettings,
)
from bloge_config.models.section import kebab
from bloge_config.models.server import ServerSettings
from bloge_config.models.settings import BlogeSettings
from bloge_config.models.store import StoreSettings
from bloge_config.models.temporal import TemporalSettings

__all__ = [
    "A2aRemoteSettings",
    "A2aSettings",
    "AgentsSettings",
    "AnthropicSettings",
    "ApprovalsSettings",
    "AutopilotSettings",
    "BlogeSettings",
    "ErrorRateWatchSettings",
    "EventJournalSettings",
    "GuardsSettings",
    "KnobSettings",
    "LlmSettings",
    "McpServerSettings",
    "McpSettings",
    "OfflineSettings",
    "OpenAiSettings",
    "Provider",
    "RetrySettings",
    "RpcRepliesSettings",
    "RpcRetrySettings",
    "RpcServiceSettings",
    "RpcSettings",
    "ServerSettings",
    "StoreSettings",
    "TemporalSettings",
    "kebab",
]
