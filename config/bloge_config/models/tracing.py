"""``bloge.tracing``: runs as OpenTelemetry traces and GenAI metrics, over OTLP."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class TracingSettings(BaseModel):
    """``bloge.tracing``: each recorded run as a trace of GenAI spans (``invoke_agent``,
    ``chat``, ``execute_tool``) and the ``gen_ai.client.*`` histograms, sent to the OTLP
    endpoint of the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` variable, as the service of
    ``OTEL_SERVICE_NAME`` with ``OTEL_RESOURCE_ATTRIBUTES``. Needs ``pip install
    'bloge[otel]'``; off, nothing of OpenTelemetry is loaded."""

    model_config = SECTION

    enabled: bool = Field(default=False, description="Trace every recorded run with "
                          "OpenTelemetry (extra bloge[otel]); the endpoint, service name and "
                          "resource come from the standard OTEL_* variables")
    capture_content: bool = Field(
        default=False, description="Put prompts, answers, tool arguments and tool results "
        "into the spans, redacted as the run's events are (they may hold personal data)")
