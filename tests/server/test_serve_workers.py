"""``bloge serve --workers N`` as one server: every worker serves the command's options, and a
scrape of ``/metrics`` counts the runs of all of them."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx

from tests.server.test_serve_command import free_port, serving


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
