"""A real HTTP server on 127.0.0.1 that writes a scripted answer at a set pace.

For the tests about time: a server that trickles its answer a byte at a time never trips a
per-read timeout, which only a real socket shows. Every connection gets the same script, a
list of ``(bytes, pause)`` steps; the server stops pausing as soon as it is shut down::

    with PacedServer([(head("application/json"), 0.0), *trickled(body, 0.1)]) as server:
        provider = OpenAIChatProvider(base_url=server.url, …)
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Self

Script = Sequence[tuple[bytes, float]]


def head(content_type: str, *, length: int | None = None) -> bytes:
    """The status line and headers of a 200 answer (``length`` sets ``content-length``)."""
    lines = ["HTTP/1.1 200 OK", f"content-type: {content_type}", "connection: close"]
    if length is not None:
        lines.append(f"content-length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def trickled(data: bytes, gap: float) -> list[tuple[bytes, float]]:
    """``data`` one byte at a time, ``gap`` seconds apart."""
    return [(data[i : i + 1], gap) for i in range(len(data))]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.stopping = threading.Event()
        self.connections = 0


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.server.connections += 1
        self._read_request()
        for data, pause in self.server.script:
            try:
                self.wfile.write(data)
            except OSError:  # the client gave up and closed the connection
                return
            if pause and self.server.stopping.wait(pause):
                return

    def _read_request(self) -> None:
        # Read all of it: closing a socket with unread bytes resets the connection, which can
        # drop the end of our answer before the client has read it.
        length = 0
        while (line := self.rfile.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        self.rfile.read(length)


class PacedServer:
    """A context manager serving ``script`` on 127.0.0.1; entering it gives the base URL."""

    def __init__(self, script: Script) -> None:
        self._server = _Server(script)
        # A short poll interval, so that shutting down takes a moment, not half a second.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def connections(self) -> int:
        """How many connections the server has accepted."""
        return self._server.connections

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
