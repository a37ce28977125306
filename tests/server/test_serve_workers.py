"""``bloge serve --workers N`` as one server: every worker serves the command's options, and a
scrape of ``/metrics`` counts the runs of all of them."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import httpx

from tests.server.test_serve_command import QUESTION, free_port, serving


def test_workers_answer_for_the_host_they_were_given(app: Path) -> None:
    # 127.0.0.2 is loopback too (served without keys) but none of the default allowed names
    with serving(app, "--host", "127.0.0.2", workers=2, port=free_port()) as url:
        assert url.startswith("http://127.0.0.2:")
        for _ in range(4):  # new connections: the kernel hands them to either worker
            answer = httpx.get(f"{url}/healthz", headers={"Connection": "close"})
            # before: 400 "Host '127.0.0.2' is not served here" from every worker
            assert answer.status_code == 200, answer.text


def test_every_worker_closes_a_client_whose_headers_are_late(app: Path) -> None:
    env = {"BLOGE_SERVER__HEADER_TIMEOUT": "0.3"}
    with serving(app, env=env, workers=2, port=free_port()) as url:
        host, port = url.removeprefix("http://").split(":")
        for _ in range(4):  # new connections: the kernel hands them to either worker
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                # before: open for good (a socket timeout here)
                assert sock.recv(4096) == b""


def runs_counted(metrics: str) -> float:
    """The succeeded runs of the application's default agent, as a scrape counts them."""
    found = re.search(r'^bloge_runs_total\{agent="customerSupport",outcome="succeeded"\} (\S+)$',
                      metrics, flags=re.MULTILINE)
    return float(found[1]) if found else 0.0


def test_a_scrape_of_metrics_counts_the_runs_of_every_worker(app: Path, tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with serving(app, env={"TMPDIR": str(temporary)}, workers=2, port=free_port()) as url:
        [shared] = temporary.iterdir()  # where the workers write their numbers
        for _ in range(8):  # new connections: the kernel hands them to either worker
            answer = httpx.post(f"{url}/chat", content=QUESTION.encode(), timeout=30,
                                headers={"Connection": "close"})
            assert answer.status_code == 200, answer.text
        scrapes = [httpx.get(f"{url}/metrics", headers={"Connection": "close"}).text
                   for _ in range(4)]
    # before: each scrape counted the runs of the worker that answered it
    assert [runs_counted(scrape) for scrape in scrapes] == [8.0] * 4
    assert not shared.exists()  # removed when bloge serve stopped
