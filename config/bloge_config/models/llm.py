"""``bloge.llm``: which model provider answers, how each one is reached, and retries."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ByteSize, Field, SecretStr

from bloge_config.fields import Duration, HttpUrl, ImportPath, Secret
from bloge_config.models.fallback import FallbackSettings
from bloge_config.models.section import (
    MAX_RESPONSE_BYTES,
    SECTION,
    HttpStatus,
    MaskedSection,
    PositiveDuration,
    ResponseBytes,
)

Provider = Literal["offline", "openai", "anthropic"]

_TIMEOUT = ("Seconds each wait of an attempt may take (for a pooled connection, to connect, to "
            "send, for each read: a stream's first byte and each next line), and a whole "
            "unstreamed answer; retry.total-timeout bounds a stream until its first byte")
_MAX_RESPONSE_BYTES = ("Largest response accepted, in bytes (a JSON body or a whole stream); "
                       "a larger one fails the call")
_MAX_CONNECTIONS = ("Most model calls of this process on the wire at once (more wait for a "
                    "connection); null: bloge.server.max-concurrent-runs")
_MAX_KEEPALIVE = "Idle connections kept open for reuse; null: as many as max-connections"


class OpenAiSettings(MaskedSection):
    """``bloge.llm.openai``: the OpenAI (or OpenAI-compatible) chat completions endpoint. An
    OpenAI stream spends some 300 bytes per token of ``max-response-bytes``."""

    model_config = SECTION

    base_url: HttpUrl = Field(
        default="https://api.openai.com/v1", description="The API's base URL (any "
        "OpenAI-compatible server: Ollama, vLLM…); default also from OPENAI_BASE_URL")
    api_key: Secret = Field(default=SecretStr(""), description="The API key, sent as a "
                            "Bearer token; default also from OPENAI_API_KEY")
    organization: str | None = Field(
        default=None, description="Sent as the OpenAI-Organization header when set")
    max_tokens: int | None = Field(
        default=None, gt=0, description="Most tokens of an answer of an agent that sets no "
        "max_tokens of its own; null: the server's limit")
    timeout: PositiveDuration = Field(default=60.0, description=_TIMEOUT)
    max_response_bytes: ResponseBytes = Field(default=ByteSize(MAX_RESPONSE_BYTES),
                                              description=_MAX_RESPONSE_BYTES)
    max_connections: int | None = Field(default=None, ge=1, description=_MAX_CONNECTIONS)
    max_keepalive_connections: int | None = Field(default=None, ge=0,
                                                  description=_MAX_KEEPALIVE)
    prompt_cache_key: bool = Field(
        default=True, description="Send each conversation's thread (else its run) as "
        "prompt_cache_key, which keeps its calls on one prompt cache; false for a compatible "
        "server that rejects unknown fields")


class AnthropicSettings(MaskedSection):
    """``bloge.llm.anthropic``: the Anthropic messages API."""

    model_config = SECTION

    base_url: HttpUrl = Field(default="https://api.anthropic.com", description="The API's "
                              "base URL; default also from ANTHROPIC_BASE_URL")
    api_key: Secret = Field(default=SecretStr(""), description="The API key, sent as the "
                            "x-api-key header; default also from ANTHROPIC_API_KEY")
    version: str = Field(default="2023-06-01", description="Sent as the anthropic-version "
                         "header: the API version the requests are written for")
    max_tokens: int = Field(default=1024, gt=0, description="Most tokens of an answer of an "
                            "agent that sets no max_tokens of its own (the API requires one)")
    timeout: PositiveDuration = Field(default=60.0, description=_TIMEOUT)
    max_response_bytes: ResponseBytes = Field(default=ByteSize(MAX_RESPONSE_BYTES),
                                              description=_MAX_RESPONSE_BYTES)
    max_connections: int | None = Field(default=None, ge=1, description=_MAX_CONNECTIONS)
    max_keepalive_connections: int | None = Field(default=None, ge=0,
                                                  description=_MAX_KEEPALIVE)
    prompt_caching: bool = Field(
        default=True, description="Mark cache_control breakpoints on each request's stable "
        "prefix (tools, system prompt, the conversation so far), at most 4")


class RetrySettings(BaseModel):
    """``bloge.llm.retry``: exponential backoff for provider calls. The wait before retry
    ``n`` (from 1) is drawn from the upper half of ``min(initial-backoff * multiplier **
    (n - 1), max-backoff)``, unless the server's ``Retry-After`` says how long; a wait that
    would outlast ``total-timeout`` fails the call at once."""

    model_config = SECTION

    max_attempts: int = Field(default=4, ge=1, description="Most attempts of one provider "
                              "call, the first included")
    initial_backoff: Duration = Field(default=1.0, description="Most seconds waited before "
                                      "the first retry (jitter draws from its upper half)")
    multiplier: float = Field(default=2.0, ge=1, description="Factor by which each wait "
                              "grows over the one before")
    max_backoff: Duration = Field(default=30.0, description="Longest wait between two "
                                  "attempts, in seconds")
    on_http_codes: tuple[HttpStatus, ...] = Field(
        default=(408, 409, 429, 500, 502, 503, 504, 529), description="HTTP statuses "
        "retried (529 is Anthropic's overloaded_error); timeouts and connection errors "
        "always are")
    max_retry_after: Duration = Field(default=60.0, description="Longest server Retry-After "
                                      "waited for, in seconds; a longer one is waited this "
                                      "long, or not at all while a fallback model stands by")
    total_timeout: PositiveDuration | None = Field(
        default=600.0, description="Seconds a whole call may take, attempts and waits "
        "together (a stream: until its first byte); null: no bound")


class OfflineSettings(BaseModel):
    """``bloge.llm.offline``: the application's hooks into the offline model, import paths
    tried in order (a class is constructed without arguments; see
    :mod:`bloge.llm.offline.hooks`)."""

    model_config = SECTION

    answer_formatters: tuple[ImportPath, ...] = Field(
        default=(), description="Hooks that word the tool results the application knows, "
        "as module:attribute")
    argument_fillers: tuple[ImportPath, ...] = Field(
        default=(), description="Hooks that give tool arguments a message cannot, as "
        "module:attribute")


class LlmSettings(BaseModel):
    """``bloge.llm``: which provider answers, and how each one is reached."""

    model_config = SECTION

    provider: Provider = Field(default="offline", description="The provider every agent's "
                               "model calls go to; offline needs no network")
    model_aliases: dict[str, str] = Field(
        default_factory=dict, description="Model names a DSL asks for → the model the "
        "provider is sent (run one DSL anywhere)")
    routes: dict[str, Provider] = Field(
        default_factory=dict, description="Model name patterns (shell-style, tried in order) "
        "→ the provider that answers them, e.g. {claude-*: anthropic}; other models go to "
        "bloge.llm.provider (one agent's fallback models may span providers)")
    fallback: FallbackSettings = Field(default_factory=FallbackSettings,
                                       description="Fallback models' circuit breakers")
    openai: OpenAiSettings = Field(default_factory=OpenAiSettings,
                                   description="The OpenAI (or compatible) endpoint")
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings,
                                         description="The Anthropic endpoint")
    retry: RetrySettings = Field(default_factory=RetrySettings,
                                 description="Retries of provider calls")
    offline: OfflineSettings = Field(default_factory=OfflineSettings,
                                     description="The offline model's hooks")
