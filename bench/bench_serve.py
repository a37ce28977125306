"""Serving costs (issue "Serving agents"): requests per second and p50/p99 latency of
``POST /v1/chat/completions`` (plain and streaming) and ``POST /agents/{id}/runs`` at 1, 50
and 200 concurrent clients on loopback, bloge's server against a bare Starlette application
calling the same operators (target: bloge's serving layer adds <= 30% at 50 clients); the time
to the first streamed token; memory per open stream.

    .venv/bin/python bench/bench_serve.py [zero|offline] [--seconds S]

Each server runs in its own process (uvicorn, one worker). The load comes from ``wrk``
(Debian's package ``wrk``) in another process, so that the client's own cost is not in the
figures; the first token and the open streams are timed from httpx in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from checkout import child_env

HERE = Path(__file__).parent
RUN = {"input": "What is the answer?"}
COMPLETION = {"model": "bench", "messages": [{"role": "user", "content": "What is the answer?"}]}
ENDPOINTS = (
    ("completions", "/v1/chat/completions", COMPLETION),
    ("completions stream", "/v1/chat/completions", {**COMPLETION, "stream": True}),
    ("runs", "/agents/bench/runs", RUN),
)
CLIENTS = (1, 50, 200)
OPEN_STREAMS = 1000
WRK = shutil.which("wrk") or "wrk"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    def __init__(self, kind: str, model: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "serve_apps.py"), kind, str(self.port), model],
            env=child_env())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                time.sleep(0.05)
            else:
                return
        raise RuntimeError("the server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_kib(self) -> int:
        with Path(f"/proc/{self.process.pid}/status").open() as status:
            line = next(line for line in status if line.startswith("VmRSS"))
        return int(line.split()[1])

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


def wrk(url: str, body: dict[str, object], clients: int, seconds: float) -> tuple[float, ...]:
    """Requests per second, p50 and p99 in ms, from ``wrk`` posting ``body`` to ``url``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(body))}\n'
                     'wrk.headers["Content-Type"] = "application/json"\n')
    try:
        out = subprocess.run(
            [WRK, "-t", str(min(clients, 2)), "-c", str(clients), "-d", f"{seconds:g}s",
             "--timeout", "60s",
             "--latency", "-s", script.name, url],
            capture_output=True, text=True, check=True).stdout
    finally:
        Path(script.name).unlink()
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw failures:\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]  # wrk's format
    return rate, _ms(out, "50%"), _ms(out, "99%")


def _ms(out: str, percentile: str) -> float:
    value, unit = re.search(rf"{percentile}\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]  # wrk's format
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


async def first_token(url: str, runs: int = 50) -> float:
    """The median time from sending a streamed completion to reading its first token."""
    async with httpx.AsyncClient(timeout=60) as client:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            async with client.stream("POST", url, json={**COMPLETION, "stream": True}) as reply:
                seen = False
                async for line in reply.aiter_lines():
                    if '"content"' in line and not seen:
                        times.append(time.perf_counter() - started)
                        seen = True
        return statistics.median(times) * 1e3


async def open_streams(server: Server, count: int) -> float:
    """KiB of server memory per open stream: ``count`` streamed completions held open at
    their first token (the ``hold`` model), against the server's memory before."""
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        await one_stream(client, server.url)  # warm up
        before = server.rss_kib()
        opened = [asyncio.Event() for _ in range(count)]
        release = asyncio.Event()
        tasks = [asyncio.create_task(hold(client, server.url, event, release))
                 for event in opened]
        await asyncio.gather(*(event.wait() for event in opened))
        after = server.rss_kib()
        release.set()
        await asyncio.gather(*tasks)
    return (after - before) / count


async def one_stream(client: httpx.AsyncClient, url: str) -> None:
    await hold(client, url, asyncio.Event(), None)


async def hold(client: httpx.AsyncClient, url: str, opened: asyncio.Event,
               release: asyncio.Event | None) -> None:
    body = {**COMPLETION, "stream": True}
    async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as reply:
        async for line in reply.aiter_lines():
            if '"content"' in line:
                opened.set()
                break
        if release is not None:
            await release.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default="zero", choices=("zero", "offline"))
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    if not Path(WRK).is_absolute():
        sys.exit("bench_serve needs wrk: apt-get install wrk")
    print(f"bench_serve: model {args.model}, wrk {args.seconds:g} s per figure")
    rates: dict[tuple[str, str, int], float] = {}
    for kind in ("bare", "bloge"):
        server = Server(kind, args.model)
        try:
            for name, path, body in ENDPOINTS:
                for clients in CLIENTS:
                    rate, p50, p99 = wrk(server.url + path, body, clients, args.seconds)
                    rates[kind, name, clients] = rate
                    print(f"   {kind:<5} {name:<18} {clients:>4} clients  {rate:8.0f} req/s  "
                          f"p50 {p50:7.2f} ms  p99 {p99:7.2f} ms", flush=True)
            ttft = asyncio.run(first_token(server.url + "/v1/chat/completions"))
            print(f"   {kind:<5} time to the first token {ttft:.2f} ms (median of 50)")
        finally:
            server.stop()
    print("serving layer, per request (bloge against bare; target at 50 clients: <= 30%)")
    for name, _, _ in ENDPOINTS:
        added = [rates["bare", name, c] / rates["bloge", name, c] - 1 for c in CLIENTS]
        print(f"   {name:<18} " + "  ".join(f"{c:>3} clients +{a * 100:3.0f}%"
                                            for c, a in zip(CLIENTS, added, strict=True)))
    for kind in ("bare", "bloge"):
        server = Server(kind, "hold")
        try:
            per_stream = asyncio.run(open_streams(server, OPEN_STREAMS))
            print(f"   {kind:<5} memory per open stream: {per_stream:.1f} KiB "
                  f"({OPEN_STREAMS} held open at their first token)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
