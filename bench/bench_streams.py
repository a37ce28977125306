"""Live streams (issue 36): N concurrent streamed runs through ``bloge serve``, each relaying a
fake upstream model over real HTTP, against a bare Starlette + httpx relay of the same stream.

    nice .venv/bin/python bench/bench_streams.py [--n 100,200,1000,2000] [--rounds 1]
        [--only "memory  runs"] [--before CHECKOUT]
    nice .venv/bin/python bench/bench_streams.py --ttft [--n 1,5,10,25,50] [--only memory]
        [--samples 100] [--awake {halt,spin,poll}] [--priority {inherit,nice,fifo}]

The upstream (a process of its own, raw asyncio) answers a streamed chat completion after
300 ms with 200 tokens at 50 tokens/s, as an OpenAI-compatible server does. Each figure starts
a fresh server process (one worker) and, after a warm-up, opens N streams over one second:
``bloge serve`` with the memory store, then SQLite, on ``POST /agents/relay/runs`` and on
``POST /v1/chat/completions``; the floor is a bare Starlette application that relays the
upstream's bytes through httpx. The configurations are interleaved within each N (the machine
is shared: the floor is measured in the same minute as bloge). Printed per configuration:

* CPU per relayed token: the server process's CPU time (user + system, from /proc) over the
  tokens its clients read — CPU, not wall time, which a loaded machine blurs;
* memory per open stream: the server's RSS once every stream has its first token, less its
  RSS after the warm-up, over N;
* time to the first token, p50 and p99 (the upstream's own 300 ms included), and what bloge
  adds to the floor's p50 and p99 (the N is flagged where the floor itself is saturated:
  its p99 more than :data:`SATURATED_MS` past the upstream's 300 ms); and the p99 of what the
  relay itself added to each first token, both ways, which leaves out the upstream's own
  300 ms wait and how late a loaded machine fires it (the upstream stamps the first token:
  :func:`first_token`);
* dropped streams: those that did not end with their ``done`` (or ``[DONE]``) and 200 tokens,
  counted by what they ended with (:func:`why_dropped`). Past saturation (N = 2,000 on a
  loaded 2-core machine) the floor drops a few too, as bloge does: httpx's wait for the
  upstream's answer fails (``ReadError``). Both relays have the same timeouts (60 s) and
  pool, and no retries (bloge's ``retry.max-attempts: 1``; by default bloge retries such a
  failure, before a stream's first byte). ``BENCH_SERVER_LOGS=DIR`` keeps each server's
  stderr there (the floor's tracebacks, bloge's failed runs).

``--ttft`` measures only the time to the first token, below saturation: N ramps (1, 5, 10,
25, 50), with the servers kept up across the ramp and enough rounds at each N for a p99 of
pooled first tokens (see :func:`ttft_ramp`).

``--awake`` keeps this VM's vCPUs from halting while it measures. A halted vCPU leaves the
host, and waking it costs milliseconds (tens, on an idle host): each hop between the client,
the server and the upstream can wait for one, which moves the floor's own p99 between two
identical runs. ``spin``: one busy loop per core at nice 19; ``poll``: a PM QoS request of 0 µs
latency held on ``/dev/cpu_dma_latency`` for the run, so that an idle vCPU polls instead of
halting; ``halt`` (the default) changes nothing. ``--priority`` runs this process and its
children at nice -15 (``nice``) or in the real-time class (``fifo``): on a shared machine,
other benches at nice -15 take turns with these too, and only ``fifo`` goes first (below
saturation these processes use a fraction of a core: the others keep the rest). Both need
root. The CPU the rest of the machine used meanwhile (in cores) is printed at the end.

The load client (this process) reads the streams with raw asyncio sockets, so that what it
costs is not the servers'.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import uvicorn
from checkout import ROOT, child_env
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

HERE = Path(__file__).parent
BLOGE = Path(sys.executable).parent / "bloge"
TOKENS = 200
TOKEN_SECONDS = 1 / 50
FIRST_TOKEN_SECONDS = 0.3
ANSWER_SECONDS = 0.05  # a whole (unstreamed) answer's wait, for bench_served_turn.py
RAMP_SECONDS = 1.0
WARM_STREAMS = 20
HOLD_SECONDS = 20.0  # how long a "hold" request's stream stays open, once it holds
#: After how many tokens a "hold" request's stream holds (1: after its first; 0: before it,
#: still waiting for the model; the upstream process reads it from its environment).
HOLD_AFTER = int(os.environ.get("BENCH_HOLD_AFTER", "1"))
#: A folder to keep each server's stderr in (the floor's tracebacks, bloge's failed runs),
#: one file per server: why a stream was dropped, which its client sees only as a 500 or
#: an error event.
SERVER_LOGS = os.environ.get("BENCH_SERVER_LOGS", "")
SATURATED_MS = 50.0  # the floor's TTFT p99 past the upstream's that means it is saturated
MARK = "zq"  # every token's text, and nowhere else in an upstream event

AGENT = 'agent relay {\n  model = "gpt-4o"\n}\n'
SETTINGS = """\
bloge:
  llm:
    provider: openai
    openai:
      base-url: http://127.0.0.1:{upstream}/v1
      api-key: sk-bench
      timeout: 60s
      max-connections: 10000
    retry:
      max-attempts: 1
  agents:
    dsl-locations: ["*.bloge"]
  store:
    url: {store}
  server:
    max-concurrent-runs: 10000
    max-connections: 10000
    request-timeout: 600s
    send-timeout: 120s
"""


# --- the upstream model -------------------------------------------------------------------

def _event(payload: dict[str, object]) -> bytes:
    body = b"data: " + json.dumps(payload).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(body), body)


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1741570283,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"transfer-encoding: chunked\r\n\r\n")
ROLE = _event(_chunk({"role": "assistant", "content": ""}))
TOKEN = _event(_chunk({"content": f" {MARK}"}))


def first_token(received: float, sent: float) -> bytes:
    """The first token, stamped with when the upstream had the request and when it sent this
    token (``time.monotonic``, which every process here shares): the client takes from
    them what the relay itself added, both ways, leaving out the upstream's own wait."""
    return _event(_chunk({"content": f" {MARK}@{received:.6f},{sent:.6f}"}))


STAMP = re.compile(rb"@(\d+\.\d+),(\d+\.\d+)")
DONE = b"data: [DONE]\n\n"
TAIL = (_event(_chunk({}, "stop"))
        + _event({**_chunk({}), "choices": [],
                  "usage": {"prompt_tokens": 12, "completion_tokens": TOKENS,
                            "total_tokens": TOKENS + 12}})
        + b"%x\r\n%s\r\n" % (len(DONE), DONE) + b"0\r\n\r\n")


_ANSWER = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1741570283,
    "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "The answer is forty-two."}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}}).encode()
WHOLE = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
         % (len(_ANSWER), _ANSWER))


class Upstream(asyncio.Protocol):
    """One connection: each POST is answered with the stream (keep-alive between them), or
    whole after :data:`ANSWER_SECONDS` when it does not ask for a stream; a request whose
    body says ``warm`` is answered at once; one whose body says ``hold`` waits
    :data:`HOLD_SECONDS` after its first :data:`HOLD_AFTER` tokens (memory_streams.py counts
    open streams so,
    each holding what an open stream holds, however busy the machine)."""

    def __init__(self) -> None:
        self.buffer = b""
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.held = False
        self.received = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a socket's transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            self.received = time.monotonic()
            if b'"stream": true' in body or b'"stream":true' in body:
                self.answer(warm=b"warm" in body, hold=b"hold" in body)
            else:
                self.loop.call_later(0 if b"warm" in body else ANSWER_SECONDS, self.send_whole)

    def answer(self, *, warm: bool, hold: bool) -> None:
        assert self.transport is not None
        if warm:
            self.transport.write(HEAD + ROLE + TOKEN * TOKENS + TAIL)
            return
        self.transport.write(HEAD)
        self.held = hold
        waits = HOLD_SECONDS if hold and HOLD_AFTER == 0 else FIRST_TOKEN_SECONDS
        self.tick(self.loop.time() + waits, 0)

    def send_whole(self) -> None:
        if self.transport is not None:
            self.transport.write(WHOLE)

    def tick(self, at: float, sent: int) -> None:
        """Send token ``sent`` at ``at`` (the role with the first; the end after the last)."""
        self.timer = self.loop.call_at(at, self.send, at, sent)

    def send(self, at: float, sent: int) -> None:
        if self.transport is None:
            return
        self.transport.write(ROLE + first_token(self.received, time.monotonic()) if sent == 0
                             else TOKEN)
        if sent + 1 < TOKENS:
            holds = self.held and sent + 1 == HOLD_AFTER
            self.tick(at + (HOLD_SECONDS if holds else TOKEN_SECONDS), sent + 1)
        else:
            self.transport.write(TAIL)


async def upstream(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(
        Upstream, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# --- the floor: a bare Starlette + httpx relay ---------------------------------------------

def floor_app(upstream_port: int) -> Starlette:
    client = httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{upstream_port}/v1", timeout=60,
        limits=httpx.Limits(max_connections=10_000, max_keepalive_connections=10_000))

    async def relay(request: Request) -> StreamingResponse:
        body = await request.json()
        upstream_request = client.build_request(
            "POST", "/chat/completions", json={**body, "model": "gpt-4o"},
            headers={"Authorization": "Bearer sk-bench"})
        reply = await client.send(upstream_request, stream=True)

        async def relayed() -> AsyncIterator[bytes]:
            try:
                async for piece in reply.aiter_bytes():
                    yield piece
            finally:
                await reply.aclose()

        return StreamingResponse(relayed(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", relay, methods=["POST"])])


# --- the servers ----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise RuntimeError("the server did not start")


@dataclass(frozen=True)
class Config:
    name: str
    kind: str  # floor | bloge
    store: str  # memory | sqlite | ""
    path: str
    stream_done: bytes
    root: str = ""  # the checkout whose bloge it runs (its PYTHONPATH); "": this one

    def body(self, text: str) -> bytes:
        if self.path.startswith("/agents"):
            return json.dumps({"input": text, "stream": True}).encode()
        return json.dumps({"model": "relay", "stream": True,
                           "messages": [{"role": "user", "content": text}]}).encode()


CONFIGS = (
    Config("floor", "floor", "", "/v1/chat/completions", b"data: [DONE]"),
    Config("bloge memory  runs", "bloge", "memory", "/agents/relay/runs", b"event: done"),
    Config("bloge memory  /v1", "bloge", "memory", "/v1/chat/completions", b"data: [DONE]"),
    Config("bloge sqlite  runs", "bloge", "sqlite", "/agents/relay/runs", b"event: done"),
    Config("bloge sqlite  /v1", "bloge", "sqlite", "/v1/chat/completions", b"data: [DONE]"),
)


class Server:
    def __init__(self, config: Config, upstream_port: int, workdir: Path) -> None:
        self.port = free_port()
        env = child_env(Path(config.root) if config.root else ROOT)
        if config.kind == "floor":
            command = [sys.executable, __file__, "floor", str(self.port), str(upstream_port)]
            cwd = None
        else:
            project = Path(tempfile.mkdtemp(dir=workdir))
            (project / "relay.bloge").write_text(AGENT)
            store = "memory://" if config.store == "memory" else "sqlite:///var/bloge.db"
            (project / "settings.yaml").write_text(
                SETTINGS.format(upstream=upstream_port, store=store))
            command = [str(BLOGE), "serve", "--port", str(self.port)]
            cwd = project
        log = Path(os.devnull)
        if SERVER_LOGS:
            name = re.sub(r"\W+", "-", config.name)
            log = Path(SERVER_LOGS) / f"{name}-{self.port}.log"
        with log.open("wb") as err:
            self.process = subprocess.Popen(command, cwd=cwd, env=env,
                                            stdout=subprocess.DEVNULL, stderr=err)
        wait_for(self.port, self.process)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- the load client -------------------------------------------------------------------------

class Countdown:
    """Sets its event once ``count`` streams have their first token."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.event = asyncio.Event()

    def first_token(self) -> None:
        self.left -= 1
        if not self.left:
            self.event.set()


class Stream(asyncio.Protocol):
    """One streamed request over its own connection (HTTP/1.0: the body ends with it)."""

    def __init__(self, request: bytes, done_mark: bytes, started: float,
                 opened: Countdown | None) -> None:
        self.request = request
        self.done_mark = done_mark
        self.started = started
        self.opened = opened
        self.loop = asyncio.get_running_loop()
        self.buffer = b""
        self.status_ok: bool | None = None
        self.tokens = 0
        self.done = False
        self.first_token: float | None = None
        self.sent = 0.0
        self.relay: float | None = None  # what the relay added to the first token, both ways
        self.legs = (0.0, 0.0)  # of which on the way to the upstream, and on the way back
        self.last_frame = b""  # the last frame without a token (an error event says why)
        self.closed = self.loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.sent = time.monotonic()
        transport.write(self.request)  # type: ignore[attr-defined]  # a socket's transport

    def data_received(self, data: bytes) -> None:
        if self.status_ok is None:
            self.status_ok = data.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200"))
        frames = (self.buffer + data).split(b"\n\n")
        self.buffer = frames.pop()
        for piece in frames:
            if MARK.encode() in piece and b"event: done" not in piece:
                self.tokens += 1
                if self.first_token is None:
                    self.first_token = self.loop.time() - self.started
                    if stamp := STAMP.search(piece):
                        received, sent = float(stamp[1]), float(stamp[2])
                        self.legs = (received - self.sent, time.monotonic() - sent)
                        self.relay = sum(self.legs)
                    if self.opened is not None:
                        self.opened.first_token()
            elif self.done_mark in piece:
                self.done = True
            else:
                self.last_frame = piece

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def one_stream(port: int, config: Config, text: str, delay: float,
                     opened: Countdown | None) -> Stream:
    await asyncio.sleep(delay)
    loop = asyncio.get_running_loop()
    body = config.body(text)
    request = (f"POST {config.path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n"
               f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    stream = Stream(request, config.stream_done, loop.time(), opened)
    try:
        await loop.create_connection(lambda: stream, "127.0.0.1", port)
    except OSError:
        stream.status_ok = False
        return stream
    await stream.closed
    return stream


def why_dropped(stream: Stream) -> str:
    """What a dropped stream ended with: the server's error (a run's id taken out, so that
    alike failures count together), its HTTP status, or how far it got."""
    if stream.status_ok is None:
        return "no answer"
    if not stream.status_ok:
        return stream.buffer.split(b"\r\n", 1)[0].decode(errors="replace") or "no connection"
    said = re.search(rb'"(?:error_)?message": ?"((?:[^"\\]|\\.)*)"', stream.last_frame)
    if said:
        return re.sub(r"\brun [0-9a-f]{32}\b", "run …", said[1].decode(errors="replace"))
    return f"{stream.tokens} tokens, {'done' if stream.done else 'no end'}"


@dataclass(frozen=True)
class Figures:
    tokens: int
    cpu: float
    kib_per_stream: float
    ttft_p50: float
    ttft_p99: float
    relay_p50: float  # what the relay added to the first token (see first_token)
    relay_p99: float
    dropped: int
    wall: float


async def load(server: Server, config: Config, count: int) -> Figures:
    warm = await asyncio.gather(*(one_stream(server.port, config, "warm", 0, None)
                                  for _ in range(WARM_STREAMS)))
    if any(not s.done for s in warm):
        raise RuntimeError(f"{config.name}: the warm-up streams failed")
    await asyncio.sleep(0.5)
    rss_before = server.rss_kib()
    cpu_before = server.cpu_seconds()
    started = time.perf_counter()
    opened = Countdown(count)
    tasks = [asyncio.create_task(one_stream(server.port, config, "Tell me a story.",
                                            RAMP_SECONDS * n / count, opened))
             for n in range(count)]
    # Memory once every stream has its first token (or, with streams failing, all ended).
    everyone = asyncio.gather(*tasks)
    all_open = asyncio.create_task(opened.event.wait())
    await asyncio.wait([all_open, everyone],  # type: ignore[type-var]  # a task and a gather
                       return_when=asyncio.FIRST_COMPLETED)
    rss_open = server.rss_kib()
    streams = await everyone
    all_open.cancel()
    wall = time.perf_counter() - started
    cpu = server.cpu_seconds() - cpu_before
    tokens = sum(s.tokens for s in streams)
    ttfts = sorted(s.first_token for s in streams if s.first_token is not None)
    relays = [s.relay for s in streams if s.relay is not None]
    dropped = [s for s in streams if not (s.status_ok and s.done and s.tokens == TOKENS)]
    for stream in dropped[:3]:
        print(f"   dropped ({config.name}): status ok {stream.status_ok}, done {stream.done}, "
              f"{stream.tokens} tokens, last frame {stream.last_frame[-300:]!r}, last bytes "
              f"{stream.buffer[-300:]!r}", flush=True)
    for reason, times in Counter(why_dropped(s) for s in dropped).most_common():
        print(f"   dropped ({config.name}): {times} x {reason}", flush=True)
    return Figures(tokens, cpu, (rss_open - rss_before) / count,
                   statistics.median(ttfts) * 1e3 if ttfts else float("nan"),
                   ttfts[min(len(ttfts) - 1, int(len(ttfts) * 0.99))] * 1e3
                   if ttfts else float("nan"),
                   percentile(relays, 0.5) * 1e3 if relays else float("nan"),
                   percentile(relays, 0.99) * 1e3 if relays else float("nan"),
                   len(dropped), wall)


def measure(config: Config, count: int, upstream_port: int, workdir: Path) -> Figures:
    server = Server(config, upstream_port, workdir)
    try:
        return asyncio.run(load(server, config, count))
    finally:
        server.stop()


# --- time to the first token below saturation (--ttft) ----------------------------------------

TTFT_SAMPLES = 100  # first tokens wanted per configuration and N: rounds = this / N ...
TTFT_MAX_ROUNDS = 40  # ... but no more rounds than this (each lasts a stream, 4.3 s)


async def ttft_round(servers: dict[str, Server], configs: list[Config],
                     count: int) -> dict[str, list[Stream]]:
    """One round: for each configuration in turn, N streams opened over
    :data:`RAMP_SECONDS`, read to their end; those that had a first token."""
    firsts: dict[str, list[Stream]] = {}
    for config in configs:
        streams = await asyncio.gather(*(
            one_stream(servers[config.name].port, config, "Tell me a story.",
                       RAMP_SECONDS * n / count, None) for n in range(count)))
        firsts[config.name] = [s for s in streams if s.first_token is not None]
        dropped = sum(1 for s in streams if not (s.status_ok and s.done and s.tokens == TOKENS))
        if dropped:
            print(f"   {config.name}: {dropped} streams dropped at N = {count}", flush=True)
    return firsts


async def warm_up(servers: dict[str, Server], configs: list[Config]) -> None:
    for config in configs:
        warm = await asyncio.gather(*(one_stream(servers[config.name].port, config, "warm", 0,
                                                 None) for _ in range(WARM_STREAMS)))
        if any(not s.done for s in warm):
            raise RuntimeError(f"{config.name}: the warm-up streams failed")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def ttft_ramp(configs: list[Config], counts: list[int], upstream_port: int,
              workdir: Path, samples: int) -> None:
    """What bloge adds to the floor's time to the first token as N grows: one server per
    configuration for the whole ramp (warmed up once); at each N, rounds of N streams per
    configuration, the configurations taking turns within a round, until
    ``samples`` first tokens (at most :data:`TTFT_MAX_ROUNDS` rounds). The p50 and p99 are
    of all the round's first tokens pooled, and of what the relay added to each (its
    time from the request to the upstream, and from the upstream's first token to the
    client: the upstream's own wait, which the machine's load delays for every
    configuration alike, left out); "saturated" flags an N where the
    floor's own p99 is more than :data:`SATURATED_MS` past the upstream's 300 ms: what
    bloge adds there is the machine's, not bloge's."""
    servers = {c.name: Server(c, upstream_port, workdir) for c in configs}
    try:
        asyncio.run(warm_up(servers, configs))
        for count in counts:
            rounds = min(TTFT_MAX_ROUNDS, -(-samples // count))
            pooled: dict[str, list[Stream]] = {c.name: [] for c in configs}
            for round_ in range(rounds):
                order = configs[round_ % len(configs):] + configs[:round_ % len(configs)]
                for name, firsts in asyncio.run(ttft_round(servers, order, count)).items():
                    pooled[name].extend(firsts)
            report_ttft(count, rounds, pooled)
    finally:
        for server in servers.values():
            server.stop()


def report_ttft(count: int, rounds: int, pooled: dict[str, list[Stream]]) -> None:
    def ms(name: str, fraction: float) -> float:
        firsts = [s.first_token for s in pooled[name] if s.first_token is not None]
        return percentile(firsts, fraction) * 1e3 if firsts else float("nan")

    def relay_ms(name: str, fraction: float) -> float:
        relays = [s.relay for s in pooled[name] if s.relay is not None]
        return percentile(relays, fraction) * 1e3 if relays else float("nan")

    def leg_ms(name: str, leg: int) -> float:
        legs = [s.legs[leg] for s in pooled[name] if s.relay is not None]
        return percentile(legs, 0.5) * 1e3 if legs else float("nan")

    saturated = ms("floor", 0.99) > FIRST_TOKEN_SECONDS * 1e3 + SATURATED_MS
    print(f"N = {count}: {rounds} round(s), {len(pooled['floor'])} first tokens each"
          + ("  SATURATED (the floor's p99 is more than "
             f"{SATURATED_MS:g} ms past the upstream's)" if saturated else ""), flush=True)
    for name in pooled:
        line = (f"   {name:<19} TTFT p50 {ms(name, 0.5):7.1f} p99 {ms(name, 0.99):7.1f} ms"
                f"  relay p50 {relay_ms(name, 0.5):6.2f} (to {leg_ms(name, 0):5.2f} back "
                f"{leg_ms(name, 1):5.2f}) p99 {relay_ms(name, 0.99):6.2f} ms")
        if name != "floor":
            line += (f"  | added p50 {ms(name, 0.5) - ms('floor', 0.5):+6.1f} "
                     f"p99 {ms(name, 0.99) - ms('floor', 0.99):+6.1f} ms; by the relay "
                     f"p50 {relay_ms(name, 0.5) - relay_ms('floor', 0.5):+6.2f} "
                     f"p99 {relay_ms(name, 0.99) - relay_ms('floor', 0.99):+6.2f} ms")
        print(line, flush=True)


#: A busy loop in the ordinary class at nice 19, whatever its parent's (see --priority).
SPIN = ("import os\nos.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))\n"
        "os.setpriority(os.PRIO_PROCESS, 0, 19)\nwhile True: pass")


@contextlib.contextmanager
def awake(how: str) -> Iterator[None]:
    """Keeps the vCPUs from halting, as ``how`` says (see the module's docstring)."""
    if how == "halt":
        yield
        return
    if how == "poll":
        with Path("/dev/cpu_dma_latency").open("wb", buffering=0) as latency:
            latency.write((0).to_bytes(4, sys.byteorder))
            yield  # the request holds while the file is open
        return
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def prioritise(how: str) -> None:
    """Run this process, and the servers and the upstream it starts, at nice -15 (``nice``)
    or in the real-time class (``fifo``: ``SCHED_FIFO`` 1, before every ordinary process of
    the machine, whatever its nice); ``inherit``: as started."""
    if how == "nice":
        os.setpriority(os.PRIO_PROCESS, 0, -15)
    elif how == "fifo":
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))


def busy_seconds() -> float:
    """The CPU time every process on the machine has used (/proc/stat, idle and iowait left
    out)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    """The CPU time this process and its waited-for children have used."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", default="",
                        help="the Ns, comma-separated (default 100,200,1000,2000; with --ttft "
                        "1,5,10,25,50)")
    parser.add_argument("--ttft", action="store_true",
                        help="ramp N and print only the time to the first token bloge adds to "
                        "the floor's at each N, with the saturation flag")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--samples", type=int, default=TTFT_SAMPLES,
                        help="with --ttft: the first tokens wanted per configuration and N "
                        f"(at most {TTFT_MAX_ROUNDS} rounds of N)")
    parser.add_argument("--only", default="", help="configurations whose name has this")
    parser.add_argument("--before", metavar="CHECKOUT",
                        help="also run each bloge configuration on this checkout's bloge "
                        "(git worktree add --detach DIR main), interleaved: before and after")
    parser.add_argument("--awake", choices=("halt", "spin", "poll"), default="halt",
                        help="keep the vCPUs from halting while measuring: busy loops at nice "
                        "19 (spin) or a 0 µs PM QoS request (poll); halt: as the machine is")
    parser.add_argument("--priority", choices=("inherit", "nice", "fifo"), default="inherit",
                        help="this process's and its children's: nice -15, or SCHED_FIFO (a "
                        "shared machine's other processes wait while these run)")
    args = parser.parse_args()
    prioritise(args.priority)
    started, busy, own = time.monotonic(), busy_seconds(), own_seconds()
    with awake(args.awake):
        run(args)
    others = (busy_seconds() - busy) - (own_seconds() - own)
    print(f"the rest of the machine used {others / (time.monotonic() - started):.2f} cores "
          f"meanwhile (load average {os.getloadavg()[0]:.2f}; --awake {args.awake}, --priority "
          f"{args.priority})", flush=True)


def run(args: argparse.Namespace) -> None:
    counts = [int(n) for n in (args.n or ("1,5,10,25,50" if args.ttft
                                          else "100,200,1000,2000")).split(",")]
    configs = [c for c in CONFIGS if c.kind == "floor" or args.only in c.name]
    if args.before:
        configs += [replace(c, name=c.name.replace("bloge", "before"), root=args.before)
                    for c in configs if c.kind == "bloge"]
    upstream_port = free_port()
    model = subprocess.Popen([sys.executable, __file__, "upstream", str(upstream_port)])
    wait_for(upstream_port, model)
    print(f"bench_streams: {TOKENS} tokens at {1 / TOKEN_SECONDS:g}/s after "
          f"{FIRST_TOKEN_SECONDS * 1e3:g} ms; streams opened over {RAMP_SECONDS:g} s; "
          f"{args.rounds} round(s)", flush=True)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if args.ttft:
                ttft_ramp(configs, counts, upstream_port, Path(workdir), args.samples)
                return
            for count in counts:
                results: dict[str, list[Figures]] = {c.name: [] for c in configs}
                for round_ in range(args.rounds):
                    # Rotate the order each round: none is always first on a fresh minute.
                    order = configs[round_ % len(configs):] + configs[:round_ % len(configs)]
                    for config in order:
                        results[config.name].append(
                            measure(config, count, upstream_port, Path(workdir)))
                report(count, results)
    finally:
        model.terminate()
        model.wait()


def report(count: int, results: dict[str, list[Figures]]) -> None:
    def cpu_per_token(figures: list[Figures]) -> float:
        return statistics.median(f.cpu / max(f.tokens, 1) for f in figures) * 1e6

    def kib(figures: list[Figures]) -> float:
        return statistics.median(f.kib_per_stream for f in figures)

    def p99(figures: list[Figures]) -> float:
        return statistics.median(f.ttft_p99 for f in figures)

    def p50(figures: list[Figures]) -> float:
        return statistics.median(f.ttft_p50 for f in figures)

    def relay99(figures: list[Figures]) -> float:
        return statistics.median(f.relay_p99 for f in figures)

    floor = results["floor"]
    # Past saturation the floor's own first tokens wait for its event loop: what bloge adds
    # to them then is no figure of bloge's.
    saturated = p99(floor) > FIRST_TOKEN_SECONDS * 1e3 + SATURATED_MS
    print(f"N = {count}" + (f" (the floor is saturated: its TTFT p99 is more than "
                            f"{SATURATED_MS:g} ms past the upstream's)" if saturated else ""))
    for name, figures in results.items():
        dropped = sum(f.dropped for f in figures)
        wall = statistics.median(f.wall for f in figures)
        line = (f"   {name:<19} CPU {cpu_per_token(figures):6.1f} µs/token  "
                f"mem {kib(figures):6.1f} KiB/stream  TTFT p50 {p50(figures):6.1f} p99 "
                f"{p99(figures):7.1f} ms  dropped {dropped}  wall {wall:5.1f} s")
        if name != "floor":
            line += (f"  | x{cpu_per_token(figures) / cpu_per_token(floor):.2f} CPU  "
                     f"x{kib(figures) / max(kib(floor), 0.1):.2f} mem  "
                     f"added TTFT p50 {p50(figures) - p50(floor):+.1f} "
                     f"p99 {p99(figures) - p99(floor):+.1f} ms, by the relay p99 "
                     f"{relay99(figures) - relay99(floor):+.2f} ms")
        print(line, flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "upstream":
        asyncio.run(upstream(int(sys.argv[2])))
    elif len(sys.argv) > 1 and sys.argv[1] == "floor":
        # uvicorn's default backlog (2048), as bloge serve's: the same accept queue for both.
        uvicorn.run(floor_app(int(sys.argv[3])), host="127.0.0.1",
                    port=int(sys.argv[2]), log_level="warning", access_log=False)
    else:
        main()
