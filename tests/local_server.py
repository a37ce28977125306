"""A real HTTP/1.1 server on 127.0.0.1, serving an ``httpx.MockTransport``-style handler.

For tests about network behaviour — connection pools, event loops, closing — where a mock
transport would hide the very sockets under test. Keep-alive is on, so a client that reuses
its connections reaches the server over one connection; the server counts connections
opened and closed::

    with LocalServer(OpenAISupportServer()) as server:
        provider = OpenAIChatProvider(base_url=server.url("/v1"), api_key="sk-…")
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import httpx

Handler = Callable[[httpx.Request], httpx.Response]

# Generous: only reached when a test is about to fail anyway.
WAIT_SECONDS = 10.0


class LocalServer:
    """Serves ``handler`` on a thread while the ``with`` block runs."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.opened = 0
        self.closed = 0
        self._changed = threading.Condition()
        self._server = _QuietServer(("127.0.0.1", 0), _request_handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self._server.server_port}{path}"

    def wait_until_closed(self, connections: int) -> int:
        """Wait until ``connections`` connections have been closed; the number closed."""
        with self._changed:
            self._changed.wait_for(lambda: self.closed >= connections, timeout=WAIT_SECONDS)
            return self.closed

    def count(self, *, opened: int = 0, closed: int = 0) -> None:
        with self._changed:
            self.opened += opened
            self.closed += closed
            self._changed.notify_all()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket],
                     client_address: Any) -> None:
        # A client that resets its connection is what the tests about closing do; anything
        # else is printed, as socketserver does.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _request_handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many requests
        disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall per response

        def setup(self) -> None:
            super().setup()
            server.count(opened=1)

        def finish(self) -> None:
            super().finish()
            server.count(closed=1)

        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- http.server's name
            """Quiet: the tests assert what matters."""

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = httpx.Request(self.command, server.url(self.path),
                                    headers=list(self.headers.items()),
                                    content=self.rfile.read(length))
            response = server.handler(request)
            body = response.read()
            self.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return RequestHandler
