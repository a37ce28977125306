"""Runs as OpenTelemetry traces and GenAI metrics, read off their events (the ``bloge[otel]``
extra).

```
run's events (journal chain → store) ─▶ RunSpans ─▶ RunTracing ─▶ batch processor ─▶ OTLP
                                                      └─▶ gen_ai.client.* histograms ─▶ OTLP
```

Nothing of OpenTelemetry is imported until a :class:`RunTracing` is made (``bloge.tracing.
enabled``); the W3C trace context that requests carry in and calls carry out is
:mod:`bloge.core.tracecontext`, which needs none of it.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.tracing.exporting import GENAI_CONVENTIONS as GENAI_CONVENTIONS
    from bloge.tracing.exporting import RunTracing as RunTracing
    from bloge.tracing.spans import RunSpans as RunSpans
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
