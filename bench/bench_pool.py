"""The provider's connection pool under load (issue 27, item 32): 200 streamed runs at once on
one ``bloge serve`` worker against a local fake OpenAI server whose streams last ``--hold``
seconds after their first token; the time to the first token, p50 and p90, with the pool
capped at httpx's default of 100 connections (what every worker had before) and with the pool
left to follow ``bloge.server.max-concurrent-runs`` (200).

    .venv/bin/python bench/bench_pool.py [--runs 200] [--hold 2]

The fake server and bloge each run in a process of their own; the clients are httpx in this
process, one connection per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import uvicorn
from checkout import child_env
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

HERE = Path(__file__).parent
AGENT = 'stream agent bench {\n  model = "gpt-4o"\n}\n'


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the process ended with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.1)
        else:
            return
    raise RuntimeError(f"nothing listens on {port}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()


def fake_openai(port: int, hold: float) -> None:
    """A chat-completions server: each stream sends its first word at once, then the rest
    after ``hold`` seconds (a model that takes its time to finish)."""
    def chunk(content: str | None, finish: str | None = None) -> bytes:
        delta = {} if content is None else {"content": content}
        body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(body)}\n\n".encode()

    async def completions(request: Request) -> StreamingResponse:
        await request.body()

        async def events() -> AsyncIterator[bytes]:
            yield chunk("The")
            await asyncio.sleep(hold)
            yield chunk(" answer is forty-two.")
            yield chunk(None, "stop")
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
                backlog=4096)


def project(folder: Path, *, fake_port: int, port: int, runs: int,
            max_connections: int | None) -> Path:
    (folder / "agents").mkdir()
    (folder / "agents" / "bench.bloge").write_text(AGENT)
    pool = "" if max_connections is None else (
        f"      max-connections: {max_connections}\n      max-keepalive-connections: 20\n")
    (folder / "settings.yaml").write_text(
        "bloge:\n"
        "  llm:\n"
        "    provider: openai\n"
        "    openai:\n"
        f"      base-url: http://127.0.0.1:{fake_port}/v1\n"
        "      api-key: sk-bench\n"
        f"{pool}"
        "  agents:\n"
        "    dsl-locations: [agents/*.bloge]\n"
        "  store:\n"
        "    url: memory://\n"
        "  server:\n"
        f"    port: {port}\n"
        f"    max-concurrent-runs: {runs}\n")
    return folder / "settings.yaml"


async def first_token(client: httpx.AsyncClient, url: str) -> float:
    body = {"model": "bench", "stream": True,
            "messages": [{"role": "user", "content": "What is the answer?"}]}
    started = time.perf_counter()
    async with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        first = None
        async for line in response.aiter_lines():
            if first is None and line.startswith("data: ") and '"content"' in line:
                first = time.perf_counter() - started
        if first is None:
            raise RuntimeError("no token came")
        return first


async def load(base: str, runs: int) -> tuple[list[float], float]:
    """The first-token times of ``runs`` streams at once, and the seconds the model calls
    waited for a connection in all (the server's ``bloge_model_pool_wait_seconds_sum``)."""
    url = base + "/v1/chat/completions"
    limits = httpx.Limits(max_connections=runs, max_keepalive_connections=runs)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        await first_token(client, url)  # warm: the agent compiled, the first connections made
        times = list(await asyncio.gather(*(first_token(client, url) for _ in range(runs))))
        metrics = (await client.get(base + "/metrics")).text
    waited = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                 if line.startswith("bloge_model_pool_wait_seconds_sum"))
    return times, waited


def measure(runs: int, hold: float, max_connections: int | None) -> tuple[list[float], float]:
    fake_port, port = free_port(), free_port()
    fake = subprocess.Popen([sys.executable, __file__, "fake", str(fake_port), str(hold)])
    try:
        wait_for(fake_port, fake)
        with tempfile.TemporaryDirectory() as folder:
            settings = project(Path(folder), fake_port=fake_port, port=port, runs=runs,
                               max_connections=max_connections)
            bloge = Path(sys.executable).with_name("bloge")
            server = subprocess.Popen([str(bloge), "serve", "-c", str(settings)], cwd=folder,
                                      env=child_env())
            try:
                wait_for(port, server)
                return asyncio.run(load(f"http://127.0.0.1:{port}", runs))
            finally:
                stop(server)
    finally:
        stop(fake)


def main() -> None:
    if sys.argv[1:2] == ["fake"]:
        fake_openai(int(sys.argv[2]), float(sys.argv[3]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--hold", type=float, default=2.0)
    options = parser.parse_args()
    print(f"{options.runs} streamed runs at once, each model stream held {options.hold:g} s")
    for label, cap in (("before: httpx's default pool (100, 20 kept)", 100),
                       (f"after: max-concurrent-runs ({options.runs})", None)):
        times, waited = measure(options.runs, options.hold, cap)
        times.sort()
        p50 = statistics.median(times) * 1000
        p90 = times[int(len(times) * 0.9) - 1] * 1000
        print(f"  {label:<45} TTFT p50 {p50:8.1f} ms  p90 {p90:8.1f} ms  "
              f"pool wait {waited:7.1f} s in all")


if __name__ == "__main__":
    main()
