"""RPC costs (issue "bloge.rpc"): round-trip latency (p50/p99) and calls per second of a
trivial method over in-process, HTTP (loopback, keep-alive) and NATS, at 1 and 100
concurrent callers; and what the in-process transport's serialization and validation add
over calling the implementation directly; and, over NATS, what an idempotency key adds (each
call a new key: claimed, then its reply stored, in the JetStream bucket the replicas share)
and what a repeated key costs (the stored reply, watched for).

    .venv/bin/python bench/bench_rpc.py [--calls N] [--nats nats://127.0.0.1:4222]

The HTTP and NATS services run in a process of their own (``bench_rpc.py --serve http PORT``
/ ``--serve nats URL``), so that the figures include a real hop between processes; the
callers run in this one. The method is ``Echo.echo(value: int) -> int``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import nats
import uvicorn
from checkout import child_env

from bloge import rpc
from bloge.rpc.asgi import rpc_app

HERE = Path(__file__).parent
CALLERS = (1, 100)
BUCKET = "bench_rpc_replies"


class Echo(Protocol):
    async def echo(self, value: int) -> int: ...


class Echoing:
    async def echo(self, value: int) -> int:
        return value


def handlers() -> dict[str, rpc.Handler]:
    return {"echo": rpc.serve(Echoing(), as_=Echo)}


async def measure(call: Callable[[int], Awaitable[int]], calls: int,
                  callers: int) -> tuple[float, float, float]:
    """(calls/s, p50 ms, p99 ms) of ``calls`` calls shared by ``callers`` tasks."""
    for n in range(min(200, calls)):
        await call(n)  # warm up: connections, caches
    latencies: list[float] = []

    async def caller(count: int) -> None:
        for n in range(count):
            started = time.perf_counter()
            await call(n)
            latencies.append(time.perf_counter() - started)

    print(f"  {callers} caller(s)…", file=sys.stderr, flush=True)
    started = time.perf_counter()
    await asyncio.gather(*(caller(calls // callers) for _ in range(callers)))
    elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) / elapsed, cuts[49] * 1000, cuts[98] * 1000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(kind: str, where: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, __file__, "--serve", kind, where],
                               stdout=subprocess.PIPE, text=True,
                               env=child_env())
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the {kind} service did not start")
    return process


def serve(kind: str, where: str) -> None:
    if kind == "http":
        class Ready(uvicorn.Server):
            async def startup(self, sockets: object = None) -> None:
                await super().startup(sockets)  # type: ignore[arg-type]  # uvicorn's own
                print("ready", flush=True)

        Ready(uvicorn.Config(rpc_app(handlers()), host="127.0.0.1", port=int(where),
                             log_level="warning", access_log=False)).run()
        return

    async def answer() -> None:
        async with rpc.NatsResponder(handlers(), where, max_concurrent=200,
                                     subject_prefix="bench", replies_bucket=BUCKET,
                                     replies_ttl=600) as responder:
            print(f"keyed calls: de-duplicated {responder.dedup}", file=sys.stderr)
            print("ready", flush=True)
            await asyncio.Event().wait()

    asyncio.run(answer())


async def bench(calls: int, nats_url: str) -> None:
    implementation = Echoing()
    local = rpc.InProcessTransport()
    for name, handler in handlers().items():
        local.register(name, handler)
    rows: list[tuple[str, int, tuple[float, float, float]]] = []
    for callers in CALLERS:
        rows.append(("direct call", callers, await measure(implementation.echo, calls, callers)))
        in_process = rpc.proxy(Echo, local, "echo")
        rows.append(("in-process", callers, await measure(in_process.echo, calls, callers)))
    port = free_port()
    http_service = start("http", str(port))
    try:
        async with rpc.HttpTransport(f"http://127.0.0.1:{port}") as transport:
            remote = rpc.proxy(Echo, transport, "echo")
            rows.extend([("http", callers, await measure(remote.echo, calls, callers))
                         for callers in CALLERS])
    finally:
        http_service.terminate()
        http_service.wait()
    nats_service = start("nats", nats_url)
    try:
        transport = rpc.NatsTransport(nats_url, subject_prefix="bench")
        remote = rpc.proxy(Echo, transport, "echo")
        rows.extend([("nats", callers, await measure(remote.echo, calls, callers))
                     for callers in CALLERS])
        keys = itertools.count()
        run = os.urandom(4).hex()

        async def keyed(value: int) -> int:
            with rpc.call_options(idempotency_key=f"{run}-{next(keys)}"):
                return await remote.echo(value)

        async def repeated(value: int) -> int:
            with rpc.call_options(idempotency_key=f"{run}-repeated"):
                return await remote.echo(0) + value * 0

        rows.extend([("nats keyed", callers, await measure(keyed, calls // 4, callers))
                     for callers in CALLERS])
        rows.append(("nats replay", 1, await measure(repeated, calls // 20, 1)))
        await transport.aclose()
    finally:
        nats_service.terminate()
        nats_service.wait()
        client = await nats.connect(nats_url)
        with contextlib.suppress(nats.errors.Error):
            await client.jetstream().delete_key_value(BUCKET)
        await client.close()
    print(f"{'transport':<12} {'callers':>7} {'calls/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for name, callers, (rate, p50, p99) in rows:
        print(f"{name:<12} {callers:>7} {rate:>10.0f} {p50:>8.3f} {p99:>8.3f}")
    direct = next(r for n, c, r in rows if n == "direct call" and c == 1)
    local_row = next(r for n, c, r in rows if n == "in-process" and c == 1)
    added = (1 / local_row[0] - 1 / direct[0]) * 1e6
    print(f"in-process serialization and validation add {added:.1f} µs per call "
          f"(1 caller) over a direct call")
    plain = next(r for n, c, r in rows if n == "nats" and c == 1)
    keyed_row = next(r for n, c, r in rows if n == "nats keyed" and c == 1)
    print(f"an idempotency key over NATS adds {keyed_row[1] - plain[1]:.3f} ms at p50 "
          f"({keyed_row[2] - plain[2]:.3f} ms at p99), 1 caller")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--nats", default=os.environ.get("BLOGE_TEST_NATS_URL",
                                                         "nats://127.0.0.1:4222"))
    parser.add_argument("--serve", nargs=2, metavar=("KIND", "WHERE"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(*arguments.serve)
        return
    asyncio.run(bench(arguments.calls, arguments.nats))


if __name__ == "__main__":
    main()
