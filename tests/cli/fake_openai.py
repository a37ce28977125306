"""A real OpenAI-compatible server on 127.0.0.1, for commands run in a subprocess."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.llm.providers.wire_payloads import openai_completion


@dataclass
class FakeOpenAI:
    """Answers every ``POST`` with ``status`` and ``body``; remembers each request seen."""

    status: int = 200
    body: dict[str, Any] = field(default_factory=lambda: openai_completion("Hello from the fake"))
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""


@contextmanager
def fake_openai(status: int = 200, body: dict[str, Any] | None = None) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(status) if body is None else FakeOpenAI(status, body)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            sent = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            fake.requests.append((self.path, dict(self.headers)))
            fake.bodies.append(json.loads(sent or b"{}"))
            payload = json.dumps(fake.body).encode()
            self.send_response(fake.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- http.server's name
            pass  # quiet: the test reads fake.requests

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
