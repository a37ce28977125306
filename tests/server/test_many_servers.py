"""Two ``bloge serve`` processes on one PostgreSQL store, as two machines behind a load
balancer: a stream started on one is re-joined through the other from its last event, and
cancelled through the other."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.llm.providers.wire_payloads import openai_stream
from tests.server.test_serve_command import free_port, serving
from tests.store.conftest import POSTGRES_DSN, postgres_schema  # noqa: F401 -- a fixture

WAIT = 60  # seconds: only a broken server makes the test wait this long


@contextmanager
def held_model() -> Iterator[str]:
    """An OpenAI-compatible model that streams its first words, then holds the stream (until
    the test is over); its base URL."""
    release = threading.Event()
    first, *rest = openai_stream(["Hello", " from", " a held", " stream."])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.send_chunks([first, rest[0]])
            release.wait(WAIT)
            self.send_chunks(rest[1:])
            self.wfile.write(b"data: [DONE]\n\n")

        def send_chunks(self, chunks: list[dict[str, Any]]) -> None:
            for chunk in chunks:
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- http.server's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def events(lines: Iterator[str]) -> Iterator[tuple[int, str]]:
    """``(id, event)`` of each SSE event read from ``lines``."""
    seq = None
    for line in lines:
        if line.startswith("id: "):
            seq = int(line[4:])
        elif line.startswith("event: ") and seq is not None:
            yield seq, line[7:]


def test_a_stream_is_rejoined_and_cancelled_through_another_server(
        app: Path, postgres_schema: str) -> None:  # noqa: F811 -- the fixture
    with held_model() as model_url:
        env = {"BLOGE_STORE__URL": f"{POSTGRES_DSN}?schema={postgres_schema}",
               "BLOGE_STORE__LEASE": "1s", "BLOGE_LLM__PROVIDER": "openai",
               "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-test"}
        with serving(app, env=env, port=free_port()) as one, \
                serving(app, env=env, port=free_port()) as other, \
                httpx.stream("POST", f"{one}/agents/customerSupport/runs", timeout=WAIT,
                             json={"input": "Hi", "stream": True}) as started:
            run_id = started.headers["bloge-run-id"]
            first = events(started.iter_lines())
            seen = next(seq for seq, kind in first if kind == "token")
            with httpx.stream("GET", f"{other}/runs/{run_id}/stream", timeout=WAIT,
                              headers={"Last-Event-ID": str(seen)}) as again:
                cancel = httpx.post(f"{other}/runs/{run_id}/cancel", timeout=WAIT)
                assert cancel.status_code in (200, 202), cancel.text
                rejoined = list(events(again.iter_lines()))
            rest = list(first)
            record = httpx.get(f"{other}/runs/{run_id}", timeout=WAIT).json()
        assert record["status"] == "cancelled", record
        assert all(seq > seen for seq, _ in rejoined)
        assert rejoined[-1][1] == "error"
        assert rest[-1] == rejoined[-1]  # both streams end with the same event
        assert re.fullmatch(r"[0-9a-f]{32}", run_id)
