"""``bloge.temporal``: the Temporal service that runs agents as durable workflows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import ByteSize, Field, SecretStr

from bloge_config.fields import Secret
from bloge_config.models.section import SECTION, MaskedSection, PositiveDuration


class TemporalSettings(MaskedSection):
    """``bloge.temporal``: the Temporal service that ``bloge worker`` serves and that
    ``bloge.runner: temporal`` starts runs on (see :mod:`bloge.temporal`; extra
    ``bloge[temporal]``).

    A run's workflow continues as new (a fresh history, the same run) at the start of a turn
    once Temporal suggests it or a ``continue-as-new-*`` bound is reached (Temporal refuses a
    history over 51,200 events or 50 MB). With ``bloge.store`` the memory view goes to
    Temporal by reference to the thread, so only a single message over ``max-payload-bytes``
    fails a run. Every worker of a task queue must agree on these settings.
    """

    model_config = SECTION

    address: str = Field(default="127.0.0.1:7233", description="The Temporal service's "
                         "host:port")
    namespace: str = Field(default="default", description="The Temporal namespace of the runs")
    task_queue: str = Field(default="bloge", description="The task queue bloge worker polls "
                            "and runs are started on")
    tls: bool = Field(default=False, description="Connect with TLS (on by itself with a "
                      "tls-* file or an api-key)")
    tls_server_ca: Path | None = Field(default=None, description="A PEM CA bundle the "
                                       "service's certificate is checked against")
    tls_client_cert: Path | None = Field(default=None, description="A PEM client certificate "
                                         "for mutual TLS (with tls-client-key)")
    tls_client_key: Path | None = Field(default=None, description="The PEM private key of "
                                        "tls-client-cert")
    api_key: Secret = Field(default=SecretStr(""), description="A Temporal Cloud API key; "
                            "never shown")
    activity_timeout: PositiveDuration = Field(
        default=600.0, description="Seconds a model call may take, and a tool call without "
        "a timeout of its own")
    heartbeat_timeout: PositiveDuration = Field(
        default=30.0, description="Seconds after which a call whose worker stopped "
        "heartbeating is given to another worker")
    tool_attempts: int = Field(default=3, ge=1, description="Attempts of a call of an "
                               "idempotent tool (others run once)")
    workflow_task_timeout: PositiveDuration = Field(
        default=10.0, description="Seconds a worker may take on one workflow task before "
        "Temporal gives it to another")
    max_concurrent_activities: int = Field(
        default=100, ge=1, description="Model and tool calls one bloge worker runs at once")
    local_model_calls: bool = Field(
        default=False, description="Make model calls of the runs this process starts local "
        "activities: faster, but redone from the start if their worker dies")
    continue_as_new_events: int = Field(
        default=10_000, ge=0, description="History events after which a run continues as "
        "new; 0: only when Temporal suggests it")
    continue_as_new_bytes: Annotated[ByteSize, Field(ge=0)] = Field(
        default=ByteSize(20 * 1024 * 1024), description="History size in bytes after which "
        "a run continues as new; 0: only when Temporal suggests it")
    max_payload_bytes: Annotated[ByteSize, Field(ge=16 * 1024)] = Field(
        default=ByteSize(2_000_000), description="Largest payload in bytes a run hands "
        "Temporal (it refuses one over 2 MiB); a larger one fails the run naming it")
