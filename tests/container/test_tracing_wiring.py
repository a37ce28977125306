"""Tracing is wired only when ``bloge.tracing.enabled``: then every recorded run is a trace
at the standard OTLP endpoint; off, nothing of OpenTelemetry is loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bloge_config import load_settings
from bloge_container import create_container
from bloge_container.errors import ConfigurationError
from tests.container.test_journal_wiring import run_support_agent
from tests.server.live_server import LiveServer
from tests.tracing.receiver import Receiver

TRACED = {"BLOGE_TRACING__ENABLED": "true"}


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, LiveServer]]:
    received = Receiver()
    with LiveServer(received.app) as server:
        yield received, server


def test_with_tracing_on_a_run_goes_to_the_standard_otlp_endpoint_as_its_service(
        project: Path, receiver: tuple[Receiver, LiveServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    received, server = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.url())
    monkeypatch.setenv("OTEL_SERVICE_NAME", "support-desk")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
    container, run_id = run_support_agent(project, TRACED)  # closing it sends what waits

    spans = received.wait_for(lambda spans: any(s.name.startswith("invoke_agent")
                                                for s in spans))
    (run,) = received.named("invoke_agent customerSupport")
    assert run.attributes["bloge.run.id"] == run_id
    assert run.resource["service.name"] == "support-desk"
    assert run.resource["deployment.environment"] == "test"
    assert {span.trace_id for span in spans} == {run.trace_id}
    assert any(point.metric == "gen_ai.client.token.usage" for point in received.points)
    condition = container.report().find("RunTracing")  # type: ignore[attr-defined]  # the container
    assert condition.registered
    assert server.url() in condition.reason


def test_with_tracing_off_the_report_says_so(project: Path) -> None:
    container = create_container(load_settings(base_dir=project, environ={}),
                                 project_dir=project)
    container.run_store()
    condition = container.report().find("RunTracing")
    assert not condition.registered
    assert "bloge.tracing.enabled is false" in condition.reason


def test_tracing_without_the_extra_is_an_error_naming_it(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bloge_container.tracing._importable", lambda module: False)
    container = create_container(load_settings(base_dir=project, environ=TRACED),
                                 project_dir=project)
    with pytest.raises(ConfigurationError, match=r"pip install 'bloge\[otel\]'"):
        container.run_store()


def test_with_tracing_off_a_served_recorded_run_loads_nothing_of_opentelemetry(
        project: Path) -> None:
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from tests.container.test_journal_wiring import run_support_agent\n"
        "from bloge.server import create_app\n"
        f"run_support_agent(Path({str(project)!r}), {{}})\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "                        if m.startswith(('opentelemetry', 'bloge.tracing')))))\n"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, cwd=Path(__file__).resolve().parents[2])
    assert json.loads(found.stdout.splitlines()[-1]) == []
