"""``bloge.server``: how ``bloge serve`` listens, whom it lets in, and its limits."""

from __future__ import annotations

from pydantic import ByteSize, Field, SecretStr, field_validator

from bloge_config.fields import Duration, Secret
from bloge_config.models.section import SECTION, MaskedSection, PositiveDuration, ResponseBytes


class ServerSettings(MaskedSection):
    """``bloge.server``: ``bloge serve`` (see :class:`bloge.server.ServerConfig` for what each
    guard does). Loopback unless ``host`` says otherwise; with ``api-keys``, threads and runs
    belong to the key that created them (another key gets 404; ``admin-keys`` see all)."""

    model_config = SECTION

    host: str = Field(default="127.0.0.1", description="The address bloge serve binds "
                      "(--host); one not on loopback needs api-keys or --insecure")
    port: int = Field(default=8000, ge=0, le=65535, description="The port bloge serve "
                      "listens on (--port)")
    workers: int = Field(default=1, ge=1, description="Server processes sharing the run "
                         "store (--workers)")
    default_agent: str | None = Field(
        default=None, description="The agent a request that names none runs; null: the "
        "only agent, if there is one")
    api_keys: tuple[Secret, ...] = Field(
        default=(), description="Keys clients send as Authorization: Bearer; once set, every "
        "endpoint but /healthz and the chat page asks for one")
    admin_keys: tuple[Secret, ...] = Field(
        default=(), description="Keys that also see and continue every key's threads and "
        "runs, and those recorded before keys were set")
    allowed_hosts: tuple[str, ...] = Field(
        default=(), description="Host header values accepted (DNS rebinding guard); empty: "
        "the loopback names and host")
    cors_origins: tuple[str, ...] = Field(
        default=(), description="Browser origins besides the server itself allowed to call "
        "it (CORS); empty: CORS off")
    max_body_bytes: ResponseBytes = Field(default=ByteSize(1024 * 1024), description="Largest "
                                          "request body, in bytes; a larger one gets 413")
    max_concurrent_runs: int = Field(
        default=64, ge=1, description="Runs a server process holds at once (more get 429 "
        "with Retry-After); also the default model connection pool")
    request_timeout: PositiveDuration | None = Field(
        default=300.0, description="Seconds a run of a request may take before it is "
        "cancelled; null: no bound")
    keepalive: PositiveDuration = Field(default=15.0, description="Seconds between keep-alive "
                                        "comments of an idle event stream")
    send_timeout: PositiveDuration = Field(default=30.0, description="Seconds a stream waits "
                                           "for a client that does not read before it gives up")
    shutdown_grace: Duration = Field(
        default=30.0, description="Seconds runs still going at shutdown get to finish before "
        "they are cancelled (with their checkpoint)")
    header_timeout: PositiveDuration = Field(
        default=10.0, description="Seconds a request may take to send all its headers, from "
        "its first byte; then its connection is closed")
    body_timeout: PositiveDuration = Field(
        default=30.0, description="Seconds a request may take to send all its body, from its "
        "headers; then its connection is closed")
    idle_timeout: PositiveDuration = Field(
        default=5.0, description="Seconds a connection may stay idle between requests before "
        "it is closed (uvicorn's keep-alive timeout)")
    max_connections: int = Field(
        default=1000, ge=1, description="Connections each server process holds open at "
        "once; past them, requests are answered 503")
    backlog: int = Field(
        default=2048, ge=1, description="Connections the system queues until the server "
        "accepts them (the listen backlog, capped by net.core.somaxconn); in a burst past "
        "it, a client's connection waits for its own retry, a second or more")

    @field_validator("api_keys", "admin_keys")
    @classmethod
    def _no_blank_key(cls, keys: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        # A blank key turns the guard on, yet no client can send it: every request refused.
        for index, key in enumerate(keys):
            if not key.get_secret_value().strip():
                raise ValueError(f"key {index + 1} of {len(keys)} is blank; remove it, or set "
                                 "an empty list for a server without keys")
        return keys
