"""The settings sections, one model per section of ``settings.yaml``.

Field names are snake_case; each also answers to its kebab-case alias (``max_attempts`` and
``max-attempts``), which is also how the models dump with ``by_alias=True``. Every field has a
default, so an empty settings file gives a working offline application. Durations are
``float`` seconds (see :mod:`bloge_config.fields`). Models are frozen; treat the dicts inside
them as read-only. Their reprs, like their JSON, never show a secret: API keys are
``SecretStr`` and URLs have the credentials of their user-info masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ByteSize,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bloge.core.masking import mask_url_credentials
from bloge_config.fields import (
    Duration,
    HttpUrl,
    ImportPath,
    OperatorReference,
    Secret,
    ServiceUrl,
    StoreUrl,
)


def kebab(name: str) -> str:
    """The kebab-case alias of a field name: ``max_attempts`` → ``max-attempts``."""
    return name.replace("_", "-")


_SECTION = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=kebab)

Provider = Literal["offline", "openai", "anthropic"]
HttpStatus = Annotated[int, Field(ge=100, le=599)]
ResponseBytes = Annotated[ByteSize, Field(gt=0)]
"""A size in bytes: a number, or text such as ``32MiB`` or ``500kB``."""
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


class _Section(BaseModel):
    """A settings section whose repr masks the credentials of URLs (``base_url``)."""

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, mask_url_credentials(value) if isinstance(value, str) else value


class OpenAiSettings(_Section):
    """``bloge.llm.openai``: the OpenAI (or OpenAI-compatible) chat completions endpoint.

    ``timeout`` bounds each attempt: connecting, sending and reading the whole answer (for a
    stream, its first byte, then each wait for its next line). ``max_response_bytes`` bounds a
    response, JSON body or whole stream; an OpenAI stream spends some 300 bytes per token.
    ``max_connections`` caps the model calls of one process on the wire at once (more wait
    for a free connection: the metric ``bloge_model_pool_wait_seconds``); unset, it follows
    ``bloge.server.max-concurrent-runs``. ``max_keepalive_connections`` is how many idle ones
    stay open for reuse; unset, as many as ``max_connections``.
    ``max_tokens`` bounds every answer of an agent that sets no ``max_tokens`` of its own
    (``null``: the server's limit, on many local servers the whole context).
    """

    model_config = _SECTION

    base_url: HttpUrl = "https://api.openai.com/v1"
    api_key: Secret = SecretStr("")
    organization: str | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: Annotated[Duration, Field(gt=0)] = 60.0
    max_response_bytes: ResponseBytes = ByteSize(MAX_RESPONSE_BYTES)
    max_connections: int | None = Field(default=None, ge=1)
    max_keepalive_connections: int | None = Field(default=None, ge=0)


class AnthropicSettings(_Section):
    """``bloge.llm.anthropic``: the Anthropic messages API; ``timeout``,
    ``max_response_bytes``, ``max_connections`` and ``max_keepalive_connections`` as in
    ``bloge.llm.openai``."""

    model_config = _SECTION

    base_url: HttpUrl = "https://api.anthropic.com"
    api_key: Secret = SecretStr("")
    version: str = "2023-06-01"
    max_tokens: int = Field(default=1024, gt=0)
    timeout: Annotated[Duration, Field(gt=0)] = 60.0
    max_response_bytes: ResponseBytes = ByteSize(MAX_RESPONSE_BYTES)
    max_connections: int | None = Field(default=None, ge=1)
    max_keepalive_connections: int | None = Field(default=None, ge=0)


class RetrySettings(BaseModel):
    """``bloge.llm.retry``: exponential backoff for provider calls.

    Attempt ``n`` (from 1) waits ``min(initial_backoff * multiplier ** (n - 1), max_backoff)``;
    a server's ``Retry-After`` is honoured up to ``max_retry_after`` seconds. 529 is Anthropic's
    ``overloaded_error``. ``total_timeout`` bounds a whole call, attempts and waits together
    (for a stream, until its first byte); ``null`` for no bound. A wait that would outlast it
    fails the call at once.
    """

    model_config = _SECTION

    max_attempts: int = Field(default=4, ge=1)
    initial_backoff: Duration = 1.0
    multiplier: float = Field(default=2.0, ge=1)
    max_backoff: Duration = 30.0
    on_http_codes: tuple[HttpStatus, ...] = (408, 409, 429, 500, 502, 503, 504, 529)
    max_retry_after: Duration = 60.0
    total_timeout: Annotated[Duration, Field(gt=0)] | None = 600.0


class OfflineSettings(BaseModel):
    """``bloge.llm.offline``: the application's hooks into the offline model, import paths
    tried in order (a class is constructed without arguments). ``answer_formatters`` word the
    tool results the application knows; ``argument_fillers`` give arguments a message cannot
    (see :mod:`bloge.llm.offline.hooks`)."""

    model_config = _SECTION

    answer_formatters: tuple[ImportPath, ...] = ()
    argument_fillers: tuple[ImportPath, ...] = ()


class LlmSettings(BaseModel):
    """``bloge.llm``: which provider answers, and how each one is reached."""

    model_config = _SECTION

    provider: Provider = "offline"
    model_aliases: dict[str, str] = Field(default_factory=dict)
    """Model names a DSL asks for → the model the provider is sent (run one DSL anywhere)."""
    openai: OpenAiSettings = Field(default_factory=OpenAiSettings)
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    offline: OfflineSettings = Field(default_factory=OfflineSettings)


class AgentsSettings(BaseModel):
    """``bloge.agents``: where agent DSL files are found (glob patterns, ``**`` recurses)."""

    model_config = _SECTION

    dsl_locations: tuple[str, ...] = ("examples/**/*.bloge",)


class StoreSettings(_Section):
    """``bloge.store``: where runs and threads are kept (see :mod:`bloge.store`).

    On by default, in a SQLite file under the project; ``postgresql://…`` for several workers.
    ``lease`` is how long a run holds its thread without its worker renewing it (a worker that
    died frees it then); ``busy-timeout`` how long a SQLite write waits for another process.
    """

    model_config = _SECTION

    enabled: bool = True
    url: StoreUrl = "sqlite:///var/bloge.db"
    lease: Annotated[Duration, Field(gt=0)] = 30.0
    auto_migrate: bool = True
    busy_timeout: Duration = 5.0


class ServerSettings(_Section):
    """``bloge.server``: ``bloge serve`` (see :class:`bloge.server.ServerConfig` for what each
    guard does). Loopback unless ``host`` says otherwise; ``api-keys`` (a list; from the
    environment ``BLOGE_SERVER__API_KEYS='["…"]'``) make every endpoint but ``/healthz`` and
    the chat page ask for one; threads and runs then belong to the key that created them
    (another key gets 404; ``admin-keys`` see all). ``header-timeout``, ``body-timeout``,
    ``idle-timeout`` and ``max-connections`` bound what slow, silent or many clients can hold
    (see each field's description)."""

    model_config = _SECTION

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1)
    default_agent: str | None = None
    api_keys: tuple[Secret, ...] = ()
    admin_keys: tuple[Secret, ...] = Field(
        default=(), description="API keys that see and continue every principal's threads "
        "and runs (an operator's), also those recorded before keys were set, which belong to "
        "nobody; accepted as API keys too. Any other key sees only its own (404 for the rest)")
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: ResponseBytes = ByteSize(1024 * 1024)
    max_concurrent_runs: int = Field(default=64, ge=1)
    request_timeout: Annotated[Duration, Field(gt=0)] | None = 300.0
    keepalive: Annotated[Duration, Field(gt=0)] = 15.0
    send_timeout: Annotated[Duration, Field(gt=0)] = 30.0
    shutdown_grace: Duration = 30.0
    header_timeout: Annotated[Duration, Field(
        gt=0, description="How long a request may take to send all its headers, from its "
        "first byte (or from when its connection opened); a later one's connection is "
        "closed (slow or silent clients)")] = 10.0
    body_timeout: Annotated[Duration, Field(
        gt=0, description="How long a request may take to send all its body, from its "
        "headers; a later one's connection is closed")] = 30.0
    idle_timeout: Annotated[Duration, Field(
        gt=0, description="How long a connection may stay idle between requests before "
        "it is closed (uvicorn's keep-alive timeout)")] = 5.0
    max_connections: int = Field(
        default=1000, ge=1, description="How many connections the server (each worker) "
        "holds open at once; past them, requests are answered 503")

    @field_validator("api_keys", "admin_keys")
    @classmethod
    def _no_blank_key(cls, keys: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        # A blank key turns the guard on, yet no client can send it: every request refused.
        for index, key in enumerate(keys):
            if not key.get_secret_value().strip():
                raise ValueError(f"key {index + 1} of {len(keys)} is blank; remove it, or set "
                                 "an empty list for a server without keys")
        return keys


class TemporalSettings(_Section):
    """``bloge.temporal``: the Temporal service that ``bloge worker`` serves and that
    ``bloge.runner: temporal`` starts runs on (see :mod:`bloge.temporal`; extra
    ``bloge[temporal]``).

    ``tls`` turns TLS on (``tls-client-cert`` and ``tls-client-key`` are PEM files for mutual
    TLS, ``tls-server-ca`` a CA bundle); ``api-key`` (Temporal Cloud) is a secret, never shown.
    ``activity-timeout`` bounds a model call, and a tool call without a ``timeout`` of its
    own; ``heartbeat-timeout`` is how soon a call whose worker died is given to another one;
    ``tool-attempts`` how often a call of an idempotent tool may be tried (others run once).
    ``local-model-calls`` makes the model calls of the runs this process starts local
    activities: a round trip through the service less per turn, but a worker that dies in a
    model call leaves the call to be made again from the start (see :mod:`bloge.temporal`).

    Long runs: a run's workflow continues as new (a fresh history, the same run) at the start
    of a turn once Temporal suggests it, or once its history holds ``continue-as-new-events``
    events or ``continue-as-new-bytes`` bytes (0: only when Temporal suggests it; Temporal
    refuses a history over 51,200 events or 50 MB). ``max-payload-bytes`` bounds every payload
    a run hands Temporal (it refuses one over 2 MiB): with ``bloge.store`` the memory view goes
    by reference to the thread, so only a single message that large fails a run; without a
    store, a run whose view, transcript or output would pass it fails naming the run. Every
    worker of a task queue must agree on these.
    """

    model_config = _SECTION

    address: str = "127.0.0.1:7233"
    namespace: str = "default"
    task_queue: str = "bloge"
    tls: bool = False
    tls_server_ca: Path | None = None
    tls_client_cert: Path | None = None
    tls_client_key: Path | None = None
    api_key: Secret = SecretStr("")
    activity_timeout: Annotated[Duration, Field(gt=0)] = 600.0
    heartbeat_timeout: Annotated[Duration, Field(gt=0)] = 30.0
    tool_attempts: int = Field(default=3, ge=1)
    workflow_task_timeout: Annotated[Duration, Field(gt=0)] = 10.0
    max_concurrent_activities: int = Field(default=100, ge=1)
    local_model_calls: bool = False
    continue_as_new_events: int = Field(default=10_000, ge=0)
    continue_as_new_bytes: Annotated[ByteSize, Field(ge=0)] = ByteSize(20 * 1024 * 1024)
    max_payload_bytes: Annotated[ByteSize, Field(ge=16 * 1024)] = ByteSize(2_000_000)


class KnobSettings(BaseModel):
    """``bloge.autopilot.knobs.<name>``: a knob the autopilot may change (see
    :class:`bloge.autopilot.Knob`). ``binding`` names the live setting it drives:
    ``agents.<agent-id>.max-tool-concurrency | max-turns | temperature``,
    ``llm.retry.max-attempts | initial-backoff | max-backoff | multiplier`` or
    ``server.max-concurrent-runs``; ``value`` defaults to that setting's value."""

    model_config = _SECTION

    tier: Literal["whitelist", "dangerous"]
    min: float
    max: float
    value: float | None = None
    binding: str | None = None
    max_step: Annotated[float, Field(gt=0)] | None = None
    cooldown: Annotated[Duration, Field(gt=0)] | None = None
    bake: Annotated[Duration, Field(gt=0)] | None = None
    mode: Literal["enforce", "dry-run"] = "enforce"
    description: str = ""


class ErrorRateWatchSettings(BaseModel):
    """``bloge.autopilot.watch[]``: feed a measured error rate to the autopilot's error-rate
    loop for ``knob``: the share of failed tool calls (``tool-errors``) or failed runs
    (``run-errors``) over the last ``window``, every ``interval``."""

    model_config = _SECTION

    knob: str
    metric: Literal["tool-errors", "run-errors"] = "tool-errors"
    threshold: float = Field(ge=0, le=1)
    window: Annotated[Duration, Field(gt=0)] = 300.0
    interval: Annotated[Duration, Field(gt=0)] = 30.0
    min_samples: int = Field(default=10, ge=1)


class AutopilotSettings(BaseModel):
    """``bloge.autopilot``: knobs agents may propose changes to, and the guardrails that
    decide (see :mod:`bloge.autopilot`). Off while there are no knobs."""

    model_config = _SECTION

    auto_execute_whitelist: bool = True
    proposal_ttl: Annotated[Duration, Field(gt=0)] = 3600.0
    hold: Annotated[Duration, Field(ge=0)] = 60.0
    recovery_ratio: float = Field(default=0.5, ge=0, le=1)
    refresh_interval: Annotated[Duration, Field(gt=0)] = 5.0
    """How often ``bloge serve`` takes in decisions made by other processes (the CLI)."""
    knobs: dict[str, KnobSettings] = Field(default_factory=dict)
    watch: tuple[ErrorRateWatchSettings, ...] = ()


class RpcRetrySettings(BaseModel):
    """``bloge.rpc.services.<name>.retry``: how often a call that may be retried is tried
    (only ``unavailable``/``deadline_exceeded``, on idempotent methods or keyed calls)."""

    model_config = _SECTION

    max_attempts: int = Field(default=3, ge=1)
    initial_backoff: Duration = 0.1
    multiplier: float = Field(default=2.0, ge=1)
    max_backoff: Duration = 2.0


RpcServiceName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]+$")]


class RpcServiceSettings(_Section):
    """``bloge.rpc.services.<name>``: where the service ``<name>`` runs (see
    :mod:`bloge.rpc`).

    ``transport: in-process`` calls ``implementation`` here (serializing as a network would);
    ``http`` calls the ``bloge serve`` at ``url`` (with ``api-key``); ``nats`` calls the
    replicas answering on the NATS servers at ``url`` (default ``bloge.rpc.nats-servers``).
    ``interface`` (a ``typing.Protocol``) types the calls. ``expose`` serves the local
    ``implementation`` to other processes: ``http`` at ``bloge serve``'s
    ``POST /rpc/<name>/<method>``, ``nats`` with ``bloge rpc serve``. ``deadline`` bounds
    each call (attempt) unless the caller says otherwise.
    """

    model_config = _SECTION

    transport: Literal["in-process", "http", "nats"] = "in-process"
    interface: ImportPath | None = None
    implementation: ImportPath | None = None
    url: ServiceUrl | None = None
    api_key: Secret = SecretStr("")
    deadline: Annotated[Duration, Field(gt=0)] | None = 30.0
    expose: tuple[Literal["http", "nats"], ...] = ()
    retry: RpcRetrySettings = Field(default_factory=RpcRetrySettings)

    @model_validator(mode="after")
    def _complete(self) -> RpcServiceSettings:
        if self.transport == "in-process" and self.implementation is None:
            raise ValueError("transport in-process needs an implementation (module:attribute)")
        if self.transport == "http" and not (self.url or "").startswith(("http://",
                                                                            "https://")):
            raise ValueError("transport http needs url: the http:// or https:// address of "
                             "the bloge serve that exposes the service")
        if self.transport == "nats" and self.url is not None and not all(
                part.strip().startswith(("nats://", "tls://"))
                for part in self.url.split(",")):
            raise ValueError("url of a nats service lists nats:// or tls:// servers, "
                             "separated by commas")
        if (self.expose or self.implementation) and self.interface is None:
            raise ValueError("an implementation is served as an interface: set interface "
                             "(module:Protocol)")
        if self.expose and self.implementation is None:
            raise ValueError("expose serves the local implementation: set implementation")
        return self


class RpcRepliesSettings(_Section):
    """``bloge.rpc.replies``: how ``bloge rpc serve`` replicas de-duplicate keyed calls (those
    with an ``idempotency-key``) across each other, in a JetStream key-value ``bucket``: a
    reply is kept ``ttl``, a replica running a call holds its claim ``claim-lease`` at a time
    (renewed while it runs; a dead replica's call is answered ``unavailable`` after it).
    ``bucket: null`` de-duplicates in each process only."""

    model_config = _SECTION

    bucket: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]+$")] | None = "bloge_rpc_replies"
    ttl: Annotated[Duration, Field(gt=0)] = 24 * 3600.0
    claim_lease: Annotated[Duration, Field(gt=0)] = 10.0


class RpcSettings(_Section):
    """``bloge.rpc``: the services the application calls or exposes, by name."""

    model_config = _SECTION

    nats_servers: tuple[ServiceUrl, ...] = ("nats://127.0.0.1:4222",)
    replies: RpcRepliesSettings = Field(default_factory=RpcRepliesSettings)
    services: dict[RpcServiceName, RpcServiceSettings] = Field(default_factory=dict)


McpServerName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""A name that can start a DSL operator reference (``docs`` of ``docs.search``)."""


class McpServerSettings(_Section):
    """``bloge.mcp.servers.<name>``: an MCP server whose tools become operators named
    ``<name>.<tool>`` (or as ``rename`` maps them: ``{search: KBSearchOperator}``).

    ``transport: stdio`` runs ``command`` with ``args`` in ``cwd`` (default: the project's
    folder), with ``env`` over a minimal inherited environment; ``command: python`` is the
    Python bloge runs on. ``transport: http`` speaks streamable HTTP to ``url``, sending
    ``headers``. Values of ``env`` and ``headers`` are secrets: never shown. ``startup-timeout``
    bounds starting, ``initialize`` and listing the tools; ``call-timeout`` each call;
    ``max-result-bytes`` one result. A server that cannot start stops the application unless
    ``required`` is false (its tools are then missing); ``enabled: false`` ignores it.
    """

    model_config = _SECTION

    enabled: bool = True
    transport: Literal["stdio", "http"] = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, Secret] = Field(default_factory=dict)
    cwd: Path | None = None
    url: ServiceUrl | None = None
    headers: dict[str, Secret] = Field(default_factory=dict)
    startup_timeout: Annotated[Duration, Field(gt=0)] = 10.0
    call_timeout: Annotated[Duration, Field(gt=0)] | None = 60.0
    max_result_bytes: ResponseBytes = ByteSize(1024 * 1024)
    rename: dict[str, str] = Field(default_factory=dict)
    required: bool = True

    @model_validator(mode="after")
    def _complete(self) -> McpServerSettings:
        if self.transport == "stdio" and not self.command:
            raise ValueError("transport stdio needs command: the program that runs the server")
        if self.transport == "http" and not (self.url or "").startswith(("http://",
                                                                            "https://")):
            raise ValueError("transport http needs url: the http:// or https:// address of "
                             "the server's MCP endpoint")
        return self


class McpSettings(_Section):
    """``bloge.mcp``: the MCP servers whose tools the agents may use, by name (extra
    ``[mcp]``)."""

    model_config = _SECTION

    servers: dict[McpServerName, McpServerSettings] = Field(default_factory=dict)


class EventJournalSettings(BaseModel):
    """``bloge.event-journal``: the journal of agent callbacks, off unless enabled."""

    model_config = _SECTION

    enabled: bool = False
    sink: Literal["store", "file", "stdout"] | None = None
    """``store`` (the run store's events, the default while the store is enabled), ``file``
    (JSON lines at ``path``, the default otherwise) or ``stdout``. ``bloge journal show``
    reads the store or the file."""
    path: Path = Path("var/journal.jsonl")
    """Where the ``file`` sink appends JSON lines, relative to the project; ignored by
    ``stdout``."""
    redact_keys: tuple[str, ...] = ()
    """Payload keys redacted in addition to API keys, which are always redacted."""


class BlogeSettings(BaseSettings):
    """The ``bloge:`` section: every setting of a bloge application.

    Build it with :func:`bloge_config.load_settings`, which reads the files, the environment and the
    overrides (:func:`bloge_config.load_settings_with_sources` also says where each value came
    from). Constructing it directly validates the given values and fills in defaults, and reads
    nothing else. Settings are equal when their values are, wherever they came from.
    """

    model_config = SettingsConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, alias_generator=kebab
    )

    llm: LlmSettings = Field(default_factory=LlmSettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    operators: dict[str, OperatorReference] = Field(default_factory=dict)
    """Operator name → ``"module:attribute"`` of the operator to register under that name, or
    ``"rpc:<service>/<method>"`` for a method of a ``bloge.rpc.services`` service."""
    listeners: tuple[ImportPath, ...] = ()
    """Import paths of extra listener classes, added to the built-in ones."""
    event_journal: EventJournalSettings = Field(default_factory=EventJournalSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    autopilot: AutopilotSettings = Field(default_factory=AutopilotSettings)
    rpc: RpcSettings = Field(default_factory=RpcSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    runner: Literal["local", "temporal"] = "local"
    """Where ``bloge run`` runs an agent: in this process, or as a Temporal workflow served
    by ``bloge worker`` (``bloge.temporal``)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the constructor's arguments: :func:`bloge_config.load_settings` owns the sources.

        pydantic-settings would merge its sources into one dict before validating, losing which
        source gave each value — which our error messages and ``bloge config`` report — and its
        environment source reads ``os.environ`` only, where ours takes a mapping for tests.
        """
        return (init_settings,)
