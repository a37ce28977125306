"""``bloge.rpc``: the services the application calls or exposes, and where each one runs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

from bloge_config.fields import Duration, ImportPath, Secret, ServiceUrl
from bloge_config.models.section import SECTION, MaskedSection, PositiveDuration

RpcServiceName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]+$")]


class RpcRetrySettings(BaseModel):
    """``bloge.rpc.services.<name>.retry``: how often a call that may be retried is tried
    (only ``unavailable``/``deadline_exceeded``, on idempotent methods or keyed calls)."""

    model_config = SECTION

    max_attempts: int = Field(default=3, ge=1, description="Most attempts of one call, the "
                              "first included")
    initial_backoff: Duration = Field(default=0.1, description="Seconds waited after the "
                                      "first failed attempt")
    multiplier: float = Field(default=2.0, ge=1, description="Factor by which each wait "
                              "grows over the one before")
    max_backoff: Duration = Field(default=2.0, description="Longest wait between two "
                                  "attempts, in seconds")


class RpcServiceSettings(MaskedSection):
    """``bloge.rpc.services.<name>``: where the service ``<name>`` runs (see
    :mod:`bloge.rpc`)."""

    model_config = SECTION

    transport: Literal["in-process", "http", "nats"] = Field(
        default="in-process", description="in-process: call implementation here (serialized "
        "as on a network); http: a bloge serve at url; nats: replicas on NATS")
    interface: ImportPath | None = Field(default=None, description="The typing.Protocol that "
                                         "types the calls, as module:Protocol")
    implementation: ImportPath | None = Field(
        default=None, description="The local implementation, as module:attribute (needed "
        "by in-process and expose)")
    url: ServiceUrl | None = Field(
        default=None, description="http: the bloge serve's address; nats: comma-separated "
        "nats:// servers (null: bloge.rpc.nats-servers)")
    api_key: Secret = Field(default=SecretStr(""), description="The API key sent to the "
                            "bloge serve of an http service")
    deadline: PositiveDuration | None = Field(
        default=30.0, description="Seconds each call (attempt) may take unless the caller "
        "says otherwise; null: no bound")
    expose: tuple[Literal["http", "nats"], ...] = Field(
        default=(), description="Serve implementation to other processes: http at bloge "
        "serve's POST /rpc/<name>/<method>, nats with bloge rpc serve")
    retry: RpcRetrySettings = Field(default_factory=RpcRetrySettings,
                                    description="Retries of the service's calls")

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


class RpcRepliesSettings(MaskedSection):
    """``bloge.rpc.replies``: how ``bloge rpc serve`` replicas de-duplicate keyed calls (those
    with an ``idempotency-key``) across each other, in a JetStream key-value bucket."""

    model_config = SECTION

    bucket: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]+$")] | None = Field(
        default="bloge_rpc_replies", description="The JetStream key-value bucket of the "
        "replies; null: each process de-duplicates alone")
    ttl: PositiveDuration = Field(default=24 * 3600.0, description="Seconds a reply is kept "
                                  "for a repeated call")
    claim_lease: PositiveDuration = Field(
        default=10.0, description="Seconds a replica's claim on a running call lasts "
        "(renewed while it runs; a dead replica's call is then answered unavailable)")


class RpcSettings(MaskedSection):
    """``bloge.rpc``: the services the application calls or exposes, by name."""

    model_config = SECTION

    nats_servers: tuple[ServiceUrl, ...] = Field(
        default=("nats://127.0.0.1:4222",), description="The NATS servers of nats services "
        "whose url is null")
    replies: RpcRepliesSettings = Field(default_factory=RpcRepliesSettings,
                                        description="De-duplication of keyed calls")
    services: dict[RpcServiceName, RpcServiceSettings] = Field(
        default_factory=dict, description="The services, by name")
