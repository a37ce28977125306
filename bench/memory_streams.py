"""What each open stream of bench_streams.py holds, by tracemalloc (issue 36's memory row):

    nice .venv/bin/python bench/memory_streams.py "bloge memory  runs" 200 [--top 25]

Starts the configuration's server (whose SIGUSR1 dumps a snapshot, the first starting
tracemalloc with 10 frames), warms it up, snapshots, opens N streams, snapshots again once
every stream has its first token, and prints the difference per stream: by the line that
asked for the memory (the frame of bloge or of an installed library nearest the allocation),
by file, and the live asyncio tasks per stream.
Run it for ``floor`` too: the floor's holdings are what any relay holds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import bench_streams as bench

#: Run in the server process: snapshots (and the count of live tasks) on SIGUSR1.
PRELUDE = """
import asyncio, signal, sys, tracemalloc
def _dump(signum, frame):
    if not tracemalloc.is_tracing():  # from the first snapshot on: the imports go at speed
        tracemalloc.start(10)
    tasks = len(asyncio.all_tasks())
    snapshot = tracemalloc.take_snapshot()
    snapshot.dump(sys.argv[0] + '.%d' % _dump.count)
    open(sys.argv[0] + '.%d.tasks' % _dump.count, 'w').write(str(tasks))
    _dump.count += 1
_dump.count = 0
signal.signal(signal.SIGUSR1, _dump)
"""


class TracedServer(bench.Server):
    """The configuration's server, under tracemalloc, snapshotting on SIGUSR1 to ``dumps``."""

    def __init__(self, config: bench.Config, upstream_port: int, workdir: Path) -> None:
        self.port = bench.free_port()
        self.dumps = workdir / f"snap-{self.port}"
        project = Path(tempfile.mkdtemp(dir=workdir))
        if config.kind == "floor":
            run = (f"import bench_streams, uvicorn\nuvicorn.run(bench_streams.floor_app("
                   f"{upstream_port}), host='127.0.0.1', port={self.port}, "
                   f"log_level='warning', access_log=False, backlog=4096)")
        else:
            (project / "relay.bloge").write_text(bench.AGENT)
            store = "memory://" if config.store == "memory" else "sqlite:///var/bloge.db"
            (project / "settings.yaml").write_text(
                bench.SETTINGS.format(upstream=upstream_port, store=store))
            run = (f"from bloge_container.cli.app import main\nsys.argv[1:] = ['serve', '--port', "
                   f"'{self.port}']\nmain()")
        script = project / "traced.py"
        script.write_text(PRELUDE + f"sys.argv[0] = {str(self.dumps)!r}\n" + run + "\n")
        env = {**os.environ, "PYTHONPATH": f"{bench.HERE.parent}:{bench.HERE}"}
        self.process = subprocess.Popen([sys.executable, str(script)],
                                        cwd=project, env=env, stdout=subprocess.DEVNULL,
                                        stderr=(workdir / "server.log").open("wb"))
        bench.wait_for(self.port, self.process)
        self.taken = 0

    def snapshot(self) -> tuple[tracemalloc.Snapshot, int]:
        dump = Path(f"{self.dumps}.{self.taken}")
        self.process.send_signal(signal.SIGUSR1)
        tasks = Path(f"{dump}.tasks")
        while not tasks.exists() or not tasks.read_text():
            time.sleep(0.05)
        self.taken += 1
        return tracemalloc.Snapshot.load(str(dump)), int(tasks.read_text())


Taken = tuple[tracemalloc.Snapshot, int]
"""A snapshot and the number of live tasks then."""


async def open_streams(server: TracedServer, config: bench.Config,
                       count: int) -> tuple[Taken, Taken]:
    warm = await asyncio.gather(*(bench.one_stream(server.port, config, "warm", 0, None)
                                  for _ in range(bench.WARM_STREAMS)))
    if any(not s.done for s in warm):
        raise RuntimeError(f"{config.name}: the warm-up streams failed")
    await asyncio.sleep(0.5)
    before = await asyncio.to_thread(server.snapshot)
    opened = bench.Countdown(count)
    streams = [asyncio.create_task(bench.one_stream(
        server.port, config, "Tell me a story.", bench.RAMP_SECONDS * n / count, opened))
        for n in range(count)]
    everyone = asyncio.gather(*streams)
    all_open = asyncio.create_task(opened.event.wait())
    await asyncio.wait([all_open, everyone],  # type: ignore[type-var]  # a task and a gather
                       return_when=asyncio.FIRST_COMPLETED)
    if not all_open.done():
        failed = [s for s in await everyone if s.first_token is None]
        raise RuntimeError(f"{config.name}: {len(failed)} streams ended without a token; the "
                           f"first: status ok {failed[0].status_ok}, last frame "
                           f"{failed[0].last_frame[-300:]!r}")
    during = await asyncio.to_thread(server.snapshot)
    dropped = [s for s in await everyone if not s.done]
    if dropped:
        raise RuntimeError(f"{config.name}: {len(dropped)} streams dropped")
    return before, during


NOISE = tuple(tracemalloc.Filter(inclusive=False, filename_pattern=name) for name in (
    tracemalloc.__file__, "<frozen importlib._bootstrap>",
    "<frozen importlib._bootstrap_external>", "<unknown>"))


def asker(trace: tracemalloc.Traceback) -> str:
    """The frame that asked for the memory: the innermost frame of bloge or of the floor,
    else of an installed library (not the standard library's asyncio, say)."""
    for frame in trace:  # innermost first (tracemalloc's order, most recent first)
        name = frame.filename
        if "/bloge/" in name or "bench_streams" in name:
            return f"{_short(name)}:{frame.lineno}"
    for frame in trace:
        if "site-packages" in frame.filename:
            return f"{_short(frame.filename)}:{frame.lineno}"
    return f"{_short(trace[0].filename)}:{trace[0].lineno}"


def _short(name: str) -> str:
    for cut in ("site-packages/", "/bloge/", "/python3.11/"):
        if cut in name:
            return name.split(cut, 1)[1] if cut != "/bloge/" else "bloge/" + name.split(cut, 1)[1]
    return name


def report(count: int, before: Taken, during: Taken, top: int) -> None:
    first, second = (s.filter_traces(NOISE) for s in (before[0], during[0]))
    total = (sum(s.size for s in second.statistics("filename"))
             - sum(s.size for s in first.statistics("filename")))
    print(f"   traced: {total / count / 1024:.1f} KiB/stream, "
          f"{(during[1] - before[1]) / count:.2f} live tasks/stream")
    by_asker: dict[str, int] = {}
    for stat in second.compare_to(first, "traceback"):
        key = asker(stat.traceback)
        by_asker[key] = by_asker.get(key, 0) + stat.size_diff
    by_file: dict[str, int] = {}
    for stat in second.compare_to(first, "filename"):
        key = _short(stat.traceback[0].filename)
        by_file[key] = by_file.get(key, 0) + stat.size_diff
    for title, table in (("by asking line", by_asker), ("by allocating file", by_file)):
        print(f"   {title}:")
        for key, size in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"     {size / count:8.0f} B/stream  {key}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("count", type=int)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    config = next(c for c in bench.CONFIGS if c.name == args.config)
    upstream_port = bench.free_port()
    model = subprocess.Popen([sys.executable, bench.__file__, "upstream", str(upstream_port)])
    bench.wait_for(upstream_port, model)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            server = TracedServer(config, upstream_port, Path(workdir))
            try:
                before, during = asyncio.run(open_streams(server, config, args.count))
            finally:
                server.stop()
            print(f"{config.name}, N = {args.count}")
            report(args.count, before, during, args.top)
    finally:
        model.terminate()
        model.wait()


if __name__ == "__main__":
    main()
