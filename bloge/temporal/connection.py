"""``connect``: a client of the Temporal service, with TLS and an API key for Temporal Cloud.

The API key is a secret: ``Connection``'s repr and every error here leave it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client
from temporalio.service import RPCError, TLSConfig

from bloge.core.errors import BlogeUsageError
from bloge.core.masking import mask_credentials


@dataclass(frozen=True, slots=True)
class Connection:
    """Where the Temporal service is (settings ``bloge.temporal``)."""

    address: str = "127.0.0.1:7233"
    namespace: str = "default"
    tls: bool = False
    tls_server_ca: Path | None = None
    tls_client_cert: Path | None = None
    tls_client_key: Path | None = None
    api_key: str = field(default="", repr=False)

    def tls_config(self) -> TLSConfig | bool:
        """TLS as ``Client.connect`` takes it; PEM files read here, naming the one that fails."""
        if (self.tls_client_cert is None) != (self.tls_client_key is None):
            raise BlogeUsageError("bloge.temporal: mutual TLS needs both tls-client-cert and "
                                  "tls-client-key")
        files = {"tls-server-ca": self.tls_server_ca, "tls-client-cert": self.tls_client_cert,
                 "tls-client-key": self.tls_client_key}
        if not any(files.values()):
            return self.tls or bool(self.api_key)
        read: dict[str, bytes | None] = {}
        for key, path in files.items():
            try:
                read[key] = None if path is None else path.read_bytes()
            except OSError as exc:
                raise BlogeUsageError(f"bloge.temporal.{key}: cannot read {path}: "
                                      f"{exc.strerror}") from exc
        return TLSConfig(server_root_ca_cert=read["tls-server-ca"],
                         client_cert=read["tls-client-cert"],
                         client_private_key=read["tls-client-key"])


async def connect(connection: Connection) -> Client:
    """A client of ``connection``'s namespace; ``BlogeUsageError`` naming the address when
    the service cannot be reached."""
    try:
        return await Client.connect(connection.address, namespace=connection.namespace,
                                    api_key=connection.api_key or None,
                                    tls=connection.tls_config())
    except (RPCError, RuntimeError) as exc:
        message = str(exc)
        if connection.api_key:
            message = message.replace(connection.api_key, "****")
        raise BlogeUsageError(
            f"cannot reach the Temporal service at {connection.address} (namespace "
            f"{connection.namespace!r}): {mask_credentials(message)}; start one (temporal "
            "server start-dev) or set bloge.temporal.address") from None
