"""``ServerConfig``: how ``bloge serve`` listens and what it allows, safe by default."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Host names that always reach a server bound to loopback.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The server's limits and its guards (settings ``bloge.server``).

    It binds ``host`` (loopback unless told otherwise). When ``api_keys`` are set, every
    request but ``GET /healthz`` and the chat page itself needs ``Authorization: Bearer <key>``;
    threads and runs then belong to the key that created them (another key gets 404), except
    for ``admin_keys``, which are keys too and see every thread and run.
    ``Host`` must be one of ``allowed_hosts`` (by default the loopback names and ``host``), and
    an ``Origin``, when a browser sends one, must be this server itself or one of
    ``cors_origins`` (CORS is off unless some are given) — the guard against DNS rebinding.
    A body larger than ``max_body_bytes`` is refused (413), a run past ``max_concurrent_runs``
    too (429 with ``Retry-After``), a run longer than ``request_timeout`` seconds is cancelled.
    A stream sends a keep-alive comment every ``keepalive`` seconds and gives up on a client
    that has not read for ``send_timeout`` seconds; at shutdown, runs still going get
    ``shutdown_grace`` seconds to finish before they are cancelled (with their checkpoint).

    A connection's request must have sent all its headers ``header_timeout`` seconds after
    its first byte (or after the connection opened), and all its body ``body_timeout``
    seconds after its headers; a connection idle between requests is closed after
    ``idle_timeout`` seconds; past ``max_connections`` open connections, requests are
    answered 503 (see :mod:`bloge.server.connections`); ``backlog`` connections wait to be
    accepted (the listen backlog).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    default_agent: str | None = None
    api_keys: tuple[str, ...] = field(default=(), repr=False)
    admin_keys: tuple[str, ...] = field(default=(), repr=False)
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    max_concurrent_runs: int = 64
    request_timeout: float | None = 300.0
    keepalive: float = 15.0
    send_timeout: float = 30.0
    shutdown_grace: float = 30.0
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    idle_timeout: float = 5.0
    max_connections: int = 1000
    backlog: int = 2048
    four_eyes: bool = False
    """``bloge.approvals.four-eyes``: who started a run may not decide its calls."""

    def hosts(self) -> frozenset[str]:
        """The host names a request's ``Host`` may carry (lower case, no port)."""
        named = self.allowed_hosts or (*LOOPBACK, self.host)
        return frozenset(name.lower().strip("[]") for name in named)
