"""What the store, the journal and /metrics cost a served turn (issue 36: each <= 2% of its wall
time with a model that answers in 50 ms).

    nice .venv/bin/python bench/bench_served_turn.py [--turns 200] [--rounds 3]

One client posts ``POST /agents/relay/runs`` (whole answers) one after another to ``bloge serve``
(one worker), whose model is bench_streams.py's upstream answering after 50 ms over HTTP on
127.0.0.1. Configurations, interleaved round by round (a fresh server each): the memory store
without the journal (the base); the SQLite store; the journal on (its file sink) beside the
memory store; and the base with ``GET /metrics`` scraped after every turn. A feature's cost is
the server's CPU time per turn above the base's (its process's user + system time, from
/proc), and the wall time per turn above the base's, each against the base's wall time per
turn. The metrics' own counting (the listener every served run has) is in the base; its share
is measured apart with ``bench/profile_streams.py``-style sampling, not here.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import bench_streams as streams
import httpx

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Variant:
    name: str
    store: str
    journal: bool = False
    scrape: bool = False


VARIANTS = (
    Variant("base (memory store)", "memory://"),
    Variant("SQLite store", "sqlite:///var/bloge.db"),
    Variant("journal (file)", "memory://", journal=True),
    Variant("/metrics scraped", "memory://", scrape=True),
)


class Served(streams.Server):
    def __init__(self, variant: Variant, upstream_port: int, workdir: Path) -> None:
        self.port = streams.free_port()
        project = Path(tempfile.mkdtemp(dir=workdir))
        (project / "relay.bloge").write_text(streams.AGENT)
        settings = streams.SETTINGS.format(upstream=upstream_port, store=variant.store)
        if variant.journal:
            settings += "  event-journal:\n    enabled: true\n    sink: file\n"
        (project / "settings.yaml").write_text(settings)
        self.process = subprocess.Popen([str(streams.BLOGE), "serve", "--port", str(self.port)],
                                        cwd=project, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        streams.wait_for(self.port, self.process)


def per_turn(variant: Variant, turns: int, upstream_port: int,
             workdir: Path) -> tuple[float, float]:
    """Wall and server CPU seconds per turn."""
    server = Served(variant, upstream_port, workdir)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as client:
            for _ in range(20):  # warm up
                client.post("/agents/relay/runs", json={"input": "warm"}).raise_for_status()
            cpu = server.cpu_seconds()
            started = time.perf_counter()
            for _ in range(turns):
                answer = client.post("/agents/relay/runs", json={"input": "What is it?"})
                answer.raise_for_status()
                if variant.scrape:
                    client.get("/metrics").raise_for_status()
            wall = time.perf_counter() - started
            return wall / turns, (server.cpu_seconds() - cpu) / turns
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    upstream_port = streams.free_port()
    model = subprocess.Popen([sys.executable, streams.__file__, "upstream", str(upstream_port)])
    streams.wait_for(upstream_port, model)
    figures: dict[str, list[tuple[float, float]]] = {v.name: [] for v in VARIANTS}
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for round_ in range(args.rounds):
                order = VARIANTS[round_ % len(VARIANTS):] + VARIANTS[:round_ % len(VARIANTS)]
                for variant in order:
                    figures[variant.name].append(
                        per_turn(variant, args.turns, upstream_port, Path(workdir)))
    finally:
        model.terminate()
        model.wait()
    base_wall = statistics.median(w for w, _ in figures[VARIANTS[0].name])
    base_cpu = statistics.median(c for _, c in figures[VARIANTS[0].name])
    print(f"bench_served_turn: {args.turns} turns x {args.rounds} rounds, model answers in "
          f"{streams.ANSWER_SECONDS * 1e3:g} ms (medians over rounds)")
    for name, seen in figures.items():
        wall = statistics.median(w for w, _ in seen)
        cpu = statistics.median(c for _, c in seen)
        line = f"   {name:<20} wall {wall * 1e3:6.2f} ms/turn  server CPU {cpu * 1e3:6.2f} ms/turn"
        if name != VARIANTS[0].name:
            line += (f"  | added CPU {(cpu - base_cpu) * 1e3:+5.2f} ms = "
                     f"{(cpu - base_cpu) / base_wall * 100:+5.1f}% of a turn, added wall "
                     f"{(wall - base_wall) / base_wall * 100:+5.1f}%")
        print(line, flush=True)


if __name__ == "__main__":
    main()
