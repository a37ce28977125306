"""A real OTLP/HTTP receiver on 127.0.0.1, and tracing that exports to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from bloge.tracing import RunTracing
from tests.server.live_server import LiveServer
from tests.tracing.receiver import Receiver

#: Metrics are exported when a test flushes them, never on a timer during it.
NEVER_MILLIS = 3_600_000


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, LiveServer]]:
    received = Receiver()
    with LiveServer(received.app) as server:
        yield received, server


def tracing_to(server: LiveServer, *, capture_content: bool = False) -> RunTracing:
    """Tracing as bloge.tracing.enabled builds it — a batch span processor, OTLP/HTTP — with
    the receiver as its endpoint."""
    return RunTracing(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=server.url("/v1/traces"))),
        metric_reader=PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=server.url("/v1/metrics")),
            export_interval_millis=NEVER_MILLIS),
        resource=Resource.create({"service.name": "bloge-tests"}),
        capture_content=capture_content, provider="offline")


@pytest.fixture
def tracing(receiver: tuple[Receiver, LiveServer]) -> Iterator[RunTracing]:
    traced = tracing_to(receiver[1])
    yield traced
    traced.shutdown()
