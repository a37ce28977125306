"""A real OTLP/HTTP receiver for the tests: a Starlette app on 127.0.0.1 that decodes the
protobuf bodies of ``/v1/traces`` and ``/v1/metrics`` with ``opentelemetry-proto`` and keeps
what they carry, as plain values."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PROTOBUF = "application/x-protobuf"
WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    status: int
    start: int
    end: int
    resource: dict[str, Any]
    #: The span's events: (name, attributes) each.
    events: tuple[tuple[str, dict[str, Any]], ...] = ()

    @property
    def parent(self) -> str | None:
        return self.parent_span_id or None


@dataclass(frozen=True)
class ReceivedPoint:
    metric: str
    unit: str
    attributes: dict[str, Any]
    count: int
    sum: float


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(item) for item in value.array_value.values)
    return getattr(value, kind) if kind else None


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


class Receiver:
    """Keeps every span and histogram point received; :meth:`wait_for` blocks until a
    condition on the spans holds (woken by each request, bounded by :data:`WAIT_SECONDS`)."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.points: list[ReceivedPoint] = []
        self.changed = threading.Condition()
        self.app = Starlette(routes=[Route("/v1/traces", self.traces, methods=["POST"]),
                                     Route("/v1/metrics", self.metrics, methods=["POST"])])

    async def _body(self, request: Request) -> bytes:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        assert request.headers["content-type"] == PROTOBUF
        return body

    async def traces(self, request: Request) -> Response:
        export = ExportTraceServiceRequest.FromString(await self._body(request))
        spans = [
            ReceivedSpan(span.name, span.trace_id.hex(), span.span_id.hex(),
                         span.parent_span_id.hex(), span.kind, attributes_of(span.attributes),
                         span.status.code, span.start_time_unix_nano, span.end_time_unix_nano,
                         attributes_of(resource.resource.attributes),
                         tuple((event.name, attributes_of(event.attributes))
                               for event in span.events))
            for resource in export.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        with self.changed:
            self.spans.extend(spans)
            self.changed.notify_all()
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type=PROTOBUF)

    async def metrics(self, request: Request) -> Response:
        export = ExportMetricsServiceRequest.FromString(await self._body(request))
        points = [
            ReceivedPoint(metric.name, metric.unit, attributes_of(point.attributes),
                          point.count, point.sum)
            for resource in export.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.WhichOneof("data") == "histogram"
            for point in metric.histogram.data_points
        ]
        with self.changed:
            self.points.extend(points)
            self.changed.notify_all()
        return Response(ExportMetricsServiceResponse().SerializeToString(), media_type=PROTOBUF)

    def wait_for(self, condition: Callable[[list[ReceivedSpan]], bool]) -> list[ReceivedSpan]:
        """The spans, once ``condition`` holds of them; ``AssertionError`` when it does not
        within :data:`WAIT_SECONDS`."""
        with self.changed:
            held = self.changed.wait_for(lambda: condition(self.spans), WAIT_SECONDS)
            assert held, f"the receiver got {[s.name for s in self.spans]}"
            return list(self.spans)

    def named(self, name: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.name == name]
