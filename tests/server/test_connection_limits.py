"""Slow and silent clients: connections whose headers or body are late are closed, idle ones
too, and the server stays answerable while they are open (real sockets, a real server)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bloge.llm import ScriptedProvider
from bloge.server.connections import uvicorn_options
from bloge_config import SettingsError, load_settings
from bloge_container.serving import server_config
from tests.server.conftest import Serve, Served

# Generous: only reached when the server never closes the connection, i.e. the test fails.
WAIT_SECONDS = 10.0
SHORT = 0.3


@contextlib.contextmanager
def connected(served: Served, sent: bytes = b"") -> Iterator[socket.socket]:
    with socket.create_connection(("127.0.0.1", served.server.port), timeout=WAIT_SECONDS) as sock:
        if sent:
            sock.sendall(sent)
        yield sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection; a socket timeout (the
    server kept it open) fails the test."""
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_a_connection_whose_headers_never_end_is_closed_after_the_header_timeout(
        serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), header_timeout=SHORT)
    with connected(served, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") as sock:
        # before: open for good
        assert read_until_closed(sock) == b""


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(
        serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), header_timeout=SHORT)
    with connected(served) as sock:
        assert read_until_closed(sock) == b""


def test_a_request_whose_body_never_ends_is_closed_after_the_body_timeout(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    served = serve(ScriptedProvider("Hi."), body_timeout=SHORT)
    head = (b"POST /agents/helper/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    with connected(served, head + b'{"input": ') as sock:
        assert read_until_closed(sock) == b""
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_connection_idle_after_its_answer_is_closed_after_the_idle_timeout(
        serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), idle_timeout=SHORT)
    with connected(served, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") as sock:
        answered = read_until_closed(sock)
    assert answered.startswith(b"HTTP/1.1 200 ")


def test_healthz_answers_while_many_slow_clients_hold_connections(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."))  # the default deadlines: they stay open meanwhile
    with contextlib.ExitStack() as held:
        for _ in range(300):
            held.enter_context(connected(served, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
        assert httpx.get(served.url("/healthz"), timeout=WAIT_SECONDS).status_code == 200


def test_past_max_connections_a_request_is_answered_503(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), max_connections=3)
    with contextlib.ExitStack() as held:
        for _ in range(3):
            held.enter_context(connected(served))
        refused = httpx.get(served.url("/healthz"), timeout=WAIT_SECONDS)
    assert refused.status_code == 503


def listen_backlog(port: int) -> int:
    """The backlog of the socket listening on ``port``, as the system holds it (``ss``: a
    listening socket's Send-Q)."""
    listed = subprocess.run(["ss", "-Htln", f"sport = :{port}"], capture_output=True,
                            text=True, check=True).stdout.split()
    return int(listed[2])


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read a backlog")
def test_the_server_listens_with_its_backlog(serve: Serve) -> None:
    served = serve(ScriptedProvider("Hi."), backlog=37)
    assert listen_backlog(served.server.port) == 37


def test_bloge_serve_listens_with_bloge_server_backlog(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text("bloge:\n  server:\n    backlog: 4096\n")
    settings = load_settings(settings_file=tmp_path / "settings.yaml", environ={})
    assert uvicorn_options(server_config(settings))["backlog"] == 4096
    (tmp_path / "settings.yaml").write_text("bloge:\n  server:\n    backlog: 0\n")
    with pytest.raises(SettingsError, match=r"bloge\.server\.backlog"):
        load_settings(settings_file=tmp_path / "settings.yaml", environ={})
