"""Tracing: built only when ``bloge.tracing.enabled`` is true (on-property), and then an
error naming the ``bloge[otel]`` extra when OpenTelemetry is missing; the run store traces
every run it records (see :mod:`bloge.store.traced`)."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from bloge_config import BlogeSettings
from bloge_container.errors import ConfigurationError
from bloge_container.report import ConditionsReport

COMPONENT = "RunTracing"
#: The modules the ``bloge[otel]`` extra installs.
MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


def run_tracing(settings: BlogeSettings, report: ConditionsReport,
                closables: list[Any]) -> Any:
    """The tracing the settings ask for, or ``None`` (with the reason in the report)."""
    section = settings.tracing
    if not section.enabled:
        report.record(COMPONENT, registered=False, kind="on-property",
                      reason="bloge.tracing.enabled is false: nothing of OpenTelemetry is "
                             "loaded")
        return None
    for module in MODULES:
        if not _importable(module):
            raise ConfigurationError(
                f"bloge.tracing.enabled is true but {module} is not installed: "
                "pip install 'bloge[otel]'")
    if not settings.store.enabled:
        report.record(COMPONENT, registered=False, kind="on-property",
                      reason="bloge.tracing.enabled is true but bloge.store.enabled is false: "
                             "the spans are read off the recorded runs' events")
        return None
    from bloge.tracing import RunTracing

    tracing = RunTracing.from_environment(capture_content=section.capture_content,
                                          provider=settings.llm.provider)
    closables.append(tracing)
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318 (the OTLP default)"
    content = ("with prompts, answers and tool data (redacted)" if section.capture_content
               else "without content")
    report.record(COMPONENT, registered=True, kind="on-property",
                  reason=f"bloge.tracing.enabled is true: every recorded run's GenAI spans "
                         f"and metrics, {content}, go over OTLP to {endpoint}")
    return tracing


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
