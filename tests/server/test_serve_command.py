"""``bloge serve`` as users run it: a real process, its own port, SIGTERM, several workers."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.cli.conftest import BLOGE, bloge, environment

QUESTION = "How do I reset my password?"


def free_port() -> int:
    """A port nobody listens on now (several workers need the port before they start)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def started_url(process: subprocess.Popen[str], workers: int,
                log: list[str] | None = None) -> str:
    """The URL of ``bloge serve`` (``process``, its stderr piped) once its ``workers`` have
    all started (``log`` gets what it printed until then); its stderr read on after that, so
    that a full pipe never blocks the server."""
    assert process.stderr is not None
    url, ready = None, 0
    for line in process.stderr:
        if log is not None:
            log.append(line)
        found = re.search(r"running on (http://[\d.]+:\d+)", line)
        url = found[1] if found else url
        ready += "Application startup complete" in line
        if url is not None and ready == workers:
            break
    else:
        raise AssertionError(f"bloge serve ended: exit {process.wait()}")
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return url


@contextmanager
def serving(project: Path, *args: str, env: dict[str, str] | None = None,
            port: int = 0, workers: int = 1, log: list[str] | None = None,
            access: list[str] | None = None) -> Iterator[str]:
    """``bloge serve`` in ``project``, once every worker has started; its URL (``log``
    gets what it printed until then; ``access``, once it stopped, its access log)."""
    with subprocess.Popen([str(BLOGE), "serve", "--port", str(port), "--workers",
                           str(workers), *args], cwd=project, env=environment(env),
                          stdout=subprocess.PIPE if access is not None else None,
                          stderr=subprocess.PIPE, text=True) as process:
        try:
            yield started_url(process, workers, log)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            if access is not None and process.stdout is not None:
                access.extend(process.stdout.read().splitlines())


def test_serve_answers_the_chat_controller_and_stops_on_sigterm(app: Path) -> None:
    with serving(app) as url:
        answer = httpx.post(f"{url}/chat", content=QUESTION.encode(), timeout=30)
        assert answer.status_code == 200, answer.text
        assert "KB-RESET-001" in answer.text
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        assert (app / "var" / "bloge.db-wal").exists()  # the store is open
    assert not (app / "var" / "bloge.db-wal").exists()  # and was closed at shutdown


def test_the_start_line_counts_the_api_keys_and_never_shows_them(app: Path) -> None:
    log: list[str] = []
    keys = ["first-secret-key", "second-secret-key"]
    with serving(app, env={"BLOGE_SERVER__API_KEYS": json.dumps(keys)}, log=log):
        pass
    [start] = [line for line in log if line.startswith("bloge serve:")]
    # before: "(an API key; 1 worker)" whatever the number of keys
    assert "(2 API keys; 1 worker)" in start
    assert not any(key in line for line in log for key in keys)


def test_the_access_log_masks_keys_in_query_strings(app: Path) -> None:
    # Before, uvicorn logged the request line whole: GET /healthz?api_key=<the key> …
    access: list[str] = []
    with serving(app, access=access) as url:
        httpx.get(f"{url}/healthz?api_key=sk-secret-1&token=tok-secret-2&after=3")
    [line] = [line for line in access if "/healthz" in line]
    assert "/healthz?api_key=****&token=****&after=3" in line
    assert "secret" not in line


def test_serve_refuses_an_open_address_without_keys(app: Path) -> None:
    refused = bloge("serve", "--host", "0.0.0.0", cwd=app)  # noqa: S104 -- what is refused
    assert refused.returncode == 2
    assert "without API keys" in refused.stderr


def test_serve_with_a_default_agent_no_agent_has_is_exit_2_naming_the_setting(
    app: Path,
) -> None:
    result = bloge("serve", cwd=app, env={"BLOGE_SERVER__DEFAULT_AGENT": "customerSuport"})
    assert result.returncode == 2
    assert ("error: bloge.server.default-agent: no agent 'customerSuport'; did you mean "
            "'customerSupport'?") in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_on_a_port_in_use_is_exit_2_naming_the_address(app: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = bloge("serve", "--port", str(port), cwd=app)
    assert result.returncode == 2
    assert (f"cannot listen on http://127.0.0.1:{port}: address already in use; stop what "
            "uses it or pick another --port") in result.stderr
    assert "Started server process" not in result.stderr


def test_workers_share_runs_and_streams(app: Path) -> None:
    with serving(app, workers=2, port=free_port()) as url:
        streamed = httpx.post(f"{url}/agents/customerSupport/runs", timeout=30,
                              json={"input": QUESTION, "stream": True}).text
        done = [json.loads(line[6:]) for line in streamed.splitlines()
                if line.startswith("data: ") and '"finish_reason"' in line][-1]
        ids = re.findall(r"^id: (\d+)$", streamed, flags=re.MULTILINE)
        for _ in range(4):  # new connections: the kernel hands them to either worker
            again = httpx.get(f"{url}/runs/{done['run_id']}/stream", timeout=30).text
            assert re.findall(r"^id: (\d+)$", again, flags=re.MULTILINE) == ids
