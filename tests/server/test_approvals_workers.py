"""A paused run holds no process: decided on another server process than the one that
started it, or after that process was killed (SIGKILL) between the request and the decision,
it continues where it is decided, and its stream is re-joined there. On SQLite and
PostgreSQL, and with ``bloge serve --workers 2``."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.conftest import BLOGE, environment
from tests.cli.test_approvals_commands import GUARDED, QUESTION
from tests.server.test_serve_command import free_port, started_url
from tests.store.conftest import POSTGRES_DSN, postgres_schema  # noqa: F401 -- a fixture


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, app: Path) -> tuple[Path, dict[str, str]]:
    """The example application with a guarded agent, and the environment naming its store."""
    (app / "examples" / "support" / "guarded.bloge").write_text(GUARDED)
    if request.param == "sqlite":
        return app, {}
    schema = request.getfixturevalue("postgres_schema")
    return app, {"BLOGE_STORE__URL": f"{POSTGRES_DSN}?schema={schema}"}


@contextmanager
def server(project: Path, env: dict[str, str], *, workers: int = 1) -> Iterator[Any]:
    """``bloge serve`` (its process and URL) until it stops, or is killed."""
    with subprocess.Popen([str(BLOGE), "serve", "--port", str(free_port()), "--workers",
                           str(workers)], cwd=project, env=environment(env),
                          stderr=subprocess.PIPE, text=True) as process:
        url = started_url(process, workers)
        try:
            yield process, url
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def paused_on(url: str) -> dict[str, Any]:
    response = httpx.post(f"{url}/agents/guardedSupport/runs", json={"input": QUESTION},
                          timeout=30, headers={"Connection": "close"})
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == "awaiting_approval"
    return body


def approve_on(url: str, paused: dict[str, Any]) -> dict[str, Any]:
    call = paused["pending_approvals"][0]
    decided = httpx.post(f"{url}/runs/{paused['id']}/approvals/{call['call_id']}",
                         json={"approve": True, "hash": call["hash"]}, timeout=30,
                         headers={"Connection": "close"})
    assert decided.status_code == 200, decided.text
    body: dict[str, Any] = decided.json()
    return body


def stream_end(url: str, paused: dict[str, Any]) -> tuple[str, Any]:
    """The last event of the run's stream, re-joined after what the client saw."""
    last: tuple[str, Any] = ("", None)
    with httpx.stream("GET", f"{url}/runs/{paused['id']}/stream", timeout=60,
                      headers={"Last-Event-ID": str(paused["events"])}) as response:
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                last = (kind, json.loads(line[6:]))
    return last


def test_a_run_paused_on_one_server_continues_where_it_is_decided(
        project: tuple[Path, dict[str, str]]) -> None:
    app, env = project
    with server(app, env) as (_, first), server(app, env) as (_, second):
        paused = paused_on(first)
        assert approve_on(second, paused)["continued"] is True
        kind, done = stream_end(second, paused)
        assert kind == "done"
        assert "KB-RESET-001" in done["content"]
        assert httpx.get(f"{first}/runs/{paused['id']}").json()["status"] == "succeeded"


def test_a_paused_run_survives_its_server_killed_before_the_decision(
        project: tuple[Path, dict[str, str]]) -> None:
    app, env = project
    with server(app, env) as (process, url):
        paused = paused_on(url)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    with server(app, env) as (_, url):
        assert httpx.get(f"{url}/runs/{paused['id']}").json()["status"] == "awaiting_approval"
        assert approve_on(url, paused)["continued"] is True
        assert stream_end(url, paused)[0] == "done"


def test_with_two_workers_any_worker_takes_the_decision_and_continues_the_run(
        project: tuple[Path, dict[str, str]]) -> None:
    app, env = project
    with server(app, env, workers=2) as (_, url):
        for _ in range(3):  # new connections: the kernel hands them to either worker
            paused = paused_on(url)
            assert approve_on(url, paused)["continued"] is True
            assert stream_end(url, paused)[0] == "done"
