"""What tracing costs a turn (issue "Traces and metrics … OpenTelemetry GenAI spans").

The 5-turn workload of bench_store.py (four turns asking for one async tool, then an answer;
zero-latency model) recorded in the in-memory store, ``--runs`` times, with tracing off
(``bloge.tracing.enabled: false``: ``store.tracing`` is ``None``) or on (a batch span
processor, the GenAI histograms, and an exporter that encodes each batch as OTLP protobuf
and drops it: the OTLP exporter's work without its socket). Wall time means nothing on a
shared machine: count instructions, twice per mode with two ``--runs``, and divide the
difference by the difference of the turns (start-up cancels out)::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/bench_tracing.py off --runs 20    # then --runs 120; then on

``bloge.tracing`` is imported only in ``on`` mode; ``off`` checks that nothing of
OpenTelemetry was loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from bench_store import TURNS, ToolModel, operator

from bloge.store import open_store


def tracing() -> Any:
    """Tracing as the container builds it, exporting to nowhere after encoding."""
    # Only in "on" mode: "off" checks that nothing of OpenTelemetry was loaded.
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import (  # noqa: PLC0415 -- see above
        encode_spans,
    )
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: PLC0415 -- see above
    from opentelemetry.sdk.trace.export import (  # noqa: PLC0415 -- see above
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    from bloge.tracing import RunTracing  # noqa: PLC0415 -- see above

    class Encoding(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            encode_spans(spans).SerializeToString()
            return SpanExportResult.SUCCESS

    return RunTracing(BatchSpanProcessor(Encoding()), metric_reader=InMemoryMetricReader(),
                      provider="openai")


async def main(mode: str, runs: int) -> None:
    store = open_store("memory://")
    traced = tracing() if mode == "on" else None
    store.tracing = traced
    agent = operator(ToolModel(), store)
    for _ in range(runs):
        await agent.aexecute("go")
    if traced is not None:
        traced.shutdown()
    else:
        assert not [m for m in sys.modules if m.startswith("opentelemetry")]
    await store.aclose()
    print(f"{mode}: {runs} runs, {runs * TURNS} turns", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("off", "on"))
    parser.add_argument("--runs", type=int, default=20)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.mode, arguments.runs))
