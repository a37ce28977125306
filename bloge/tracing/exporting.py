"""``RunTracing``: where a process's run spans and GenAI metrics go — an OTLP exporter behind
a batch span processor, and two histograms — and the :class:`~bloge.tracing.spans.RunSpans`
of each run it traces.

It does not install a global tracer provider: a run's spans are built from its events with
their ids fixed in advance (see :mod:`bloge.core.tracecontext`) and handed to the span
processor as they end, so that a run resumed elsewhere continues the same spans. Loading this
module loads OpenTelemetry; a missing one is an error naming the ``bloge[otel]`` extra.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bloge.core.errors import BlogeUsageError

try:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
except ImportError as missing:  # pragma: no cover - exercised without the extra installed
    raise BlogeUsageError(
        f"bloge.tracing.enabled is true but OpenTelemetry is not installed ({missing.name}): "
        "pip install 'bloge[otel]'") from missing

if TYPE_CHECKING:
    from bloge.core.tracecontext import TraceParent
    from bloge.tracing.spans import RunSpans

#: The version of the GenAI semantic conventions the spans and metrics follow.
GENAI_CONVENTIONS = "0.1.0"
SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
#: The buckets the GenAI conventions advise for token counts and for durations in seconds.
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)


class RunTracing:
    """Spans of runs to ``processor``, metrics to ``metric_reader``, both with ``resource``.

    ``capture_content``: a model call's span carries its messages and answer, a tool call's
    its arguments and result — as the run's events keep them, redacted alike. ``provider`` is
    the ``gen_ai.provider.name`` of the model calls (``bloge.llm.provider``).
    """

    def __init__(self, processor: SpanProcessor, *, metric_reader: MetricReader | None = None,
                 resource: Resource | None = None, capture_content: bool = False,
                 provider: str | None = None) -> None:
        from opentelemetry.sdk.metrics.view import (  # noqa: PLC0415 -- with the SDK, above
            ExplicitBucketHistogramAggregation,
            View,
        )

        self.processor = processor
        self.resource = resource if resource is not None else Resource.create()
        self.scope = InstrumentationScope("bloge", _version(), SCHEMA_URL)
        self.capture_content = capture_content
        self.provider = provider
        views = [
            View(instrument_name="gen_ai.client.token.usage",
                 aggregation=ExplicitBucketHistogramAggregation(TOKEN_BUCKETS)),
            View(instrument_name="gen_ai.client.operation.duration",
                 aggregation=ExplicitBucketHistogramAggregation(DURATION_BUCKETS)),
        ]
        self.meters = MeterProvider(resource=self.resource, views=views,
                                    metric_readers=[] if metric_reader is None
                                    else [metric_reader])
        meter = self.meters.get_meter("bloge", _version(), schema_url=SCHEMA_URL)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Number of input and output tokens used")
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s",
            description="GenAI operation duration")

    @classmethod
    def from_environment(cls, *, capture_content: bool = False,
                         provider: str | None = None) -> RunTracing:
        """Spans and metrics to the OTLP endpoint of ``OTEL_EXPORTER_OTLP_ENDPOINT`` (and the
        other standard ``OTEL_EXPORTER_OTLP_*`` variables; ``OTEL_EXPORTER_OTLP_PROTOCOL``
        ``grpc`` or the default ``http/protobuf``), as ``OTEL_SERVICE_NAME`` with
        ``OTEL_RESOURCE_ATTRIBUTES``; spans through a batch processor."""
        spans, metrics = _exporters(os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL",
                                                   "http/protobuf"))
        return cls(BatchSpanProcessor(spans),
                   metric_reader=PeriodicExportingMetricReader(metrics),
                   resource=_resource(), capture_content=capture_content, provider=provider)

    def run(self, *, run_id: str, thread_id: str, agent: str, started_at: float,
            parent: TraceParent | None, model: str | None = None,
            history: Iterable[Any] = (), answering: str | None = None) -> RunSpans:
        """The spans of run ``run_id`` (begun at ``started_at``) of ``agent``, which asks for
        ``model``, children of ``parent`` (the caller's span) when given; ``history``: the
        stored events of a run being resumed (see :mod:`bloge.tracing.verdicts`);
        ``answering``: the agent it was handed to, when not told by ``history``."""
        from bloge.tracing.spans import RunSpans  # noqa: PLC0415 -- one module per concept

        return RunSpans(self, run_id=run_id, thread_id=thread_id, agent=agent,
                        started_at=started_at, parent=parent, model=model, history=history,
                        answering=answering)

    def export(self, span: Any) -> None:
        """Hand one ended span to the processor."""
        self.processor.on_end(span)

    def flush(self, timeout_millis: int = 30_000) -> bool:
        """Send what is waiting now; whether it all went."""
        spans = self.processor.force_flush(timeout_millis)
        metrics = self.meters.force_flush(timeout_millis)
        return bool(spans and metrics)

    def shutdown(self) -> None:
        """Send what is waiting and stop the exporters' threads."""
        self.processor.shutdown()
        self.meters.shutdown()

    close = shutdown

    def __repr__(self) -> str:
        return f"RunTracing({self.processor!r}, capture_content={self.capture_content})"


#: The package of the OTLP exporters of each OTEL_EXPORTER_OTLP_PROTOCOL.
_EXPORTERS = {"http/protobuf": "opentelemetry.exporter.otlp.proto.http",
              "grpc": "opentelemetry.exporter.otlp.proto.grpc"}


def _exporters(protocol: str) -> tuple[SpanExporter, Any]:
    """The OTLP span and metric exporters of ``protocol``, configured by the environment."""
    package = _EXPORTERS.get(protocol)
    if package is None:
        raise BlogeUsageError(f"OTEL_EXPORTER_OTLP_PROTOCOL is {protocol!r}; bloge exports "
                              "'http/protobuf' (the default) or 'grpc'")
    try:
        spans = importlib.import_module(f"{package}.trace_exporter").OTLPSpanExporter
        metrics = importlib.import_module(f"{package}.metric_exporter").OTLPMetricExporter
    except ImportError as missing:
        raise BlogeUsageError(f"the OTLP exporter for {protocol} is missing ({missing.name}): "
                              "pip install 'bloge[otel]'") from missing
    exporter: SpanExporter = spans()
    return exporter, metrics()


def _resource() -> Resource:
    """The process's resource: ``OTEL_SERVICE_NAME`` (else ``bloge``) and
    ``OTEL_RESOURCE_ATTRIBUTES``."""
    attributes: dict[str, Any] = {"telemetry.sdk.name": "opentelemetry"}
    if not os.environ.get("OTEL_SERVICE_NAME") and "service.name=" not in os.environ.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""):
        attributes["service.name"] = "bloge"
    return Resource.create(attributes)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 -- once

    try:
        return version("bloge")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        return "0"
