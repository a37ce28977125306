"""What each open stream of bench_streams.py holds (issue 36's memory row):

    nice .venv/bin/python bench/memory_streams.py "bloge memory  runs" 200 [--top 25]
        [--frames 40 | --frames 0] [--tokens 1] [--ramp 1.0] [--keep DIR]

Starts the configuration's server (whose SIGUSR1 dumps a snapshot, the first starting
tracemalloc with ``--frames`` frames), warms it up, snapshots, opens N streams over ``--ramp``
seconds whose upstream holds them open after their first ``--tokens`` tokens (each then holds
what an open stream holds, however busy the machine; more tokens show what a stream keeps per
token relayed; 0, what it holds while it waits for the model), snapshots again once every
stream has them, and prints the difference per stream:

* the RSS (inflated by tracemalloc's own traces unless ``--frames 0``) and the live tasks;
* pymalloc's blocks in use (the small objects: steadier than the RSS, which moves by how the
  frees left its pools and pages) and its free blocks, by size class (``sys._debugmallocstats``;
  not under tracemalloc, whose hooks leave them unprinted);
* the cyclic garbage the collector had not freed yet, by type (then collected: what follows
  is what is live);
* the objects the collector tracks, by type (coroutines and generators by their function:
  the chain of awaits each stream holds, frame by frame), with their ``sys.getsizeof``;
* with tracemalloc: the bytes traced, by the line that asked for them (the innermost frame of
  bloge or of the floor, else of an installed library) and by the file that allocated them.
  ``--keep DIR`` saves both snapshots, to read their tracebacks.

Run it for ``floor`` too: the floor's holdings are what any relay holds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_streams as bench
from checkout import ROOT, child_env

#: Run in the server process: snapshots (and the count of live tasks) on SIGUSR1.
PRELUDE = """
import asyncio, gc, json, os, re, signal, sys, tempfile, tracemalloc
def _rss_kib():
    return next(int(line.split()[1]) for line in open('/proc/self/status')
                if line.startswith('VmRSS'))
def _pymalloc():
    # What pymalloc holds for objects (of up to 512 B), in bytes: in blocks in use, and in
    # free blocks of its pools. Less noisy than the RSS, which moves by what pools and
    # pages the frees left half used; sys._debugmallocstats writes to C's stderr.
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    stats = {name: int(value.replace(',', '')) for name, value in re.findall(
        r'# bytes in (allocated|available) blocks *= *([0-9,]+)', text)}
    if stats:  # the arenas' bytes, and the free blocks by size class
        stats['arenas'] = int(re.search(r'\\nTotal *= *([0-9,]+)', text)[1].replace(',', ''))
        stats['classes'] = {size: int(avail) for size, avail in re.findall(
            r'\\n *[0-9]+ +([0-9]+) +[0-9]+ +[0-9]+ +([0-9]+)', text)}
    return stats
def _census(rss, uncollected, garbage):
    # The live objects the collector tracks, by type: how many and their sys.getsizeof
    # (a coroutine's or generator's includes its frame), and the process's RSS in KiB.
    by_type = {}
    for thing in gc.get_objects():
        kind = type(thing)
        name = kind.__module__ + '.' + kind.__qualname__
        if kind.__name__ in ('coroutine', 'async_generator', 'generator'):
            name += ' ' + thing.__qualname__  # which: the chain of awaits, frame by frame
        elif kind.__name__ == 'method':
            name += ' ' + thing.__func__.__qualname__  # which: a callback kept, mostly
        count, size = by_type.get(name, (0, 0))
        by_type[name] = (count + 1, size + sys.getsizeof(thing))
    return {'types': by_type, 'rss_kib': rss, 'traced': tracemalloc.get_traced_memory()[0],
            'uncollected': uncollected, 'garbage': garbage, 'pymalloc': _pymalloc()}
def _tracing(frames):
    # From the first snapshot on (the imports go at speed), unless told not to trace.
    if frames and not tracemalloc.is_tracing():
        tracemalloc.start(frames)
def _dump(signum, frame):
    _tracing(FRAMES)
    tasks = len(asyncio.all_tasks())
    rss = _rss_kib()
    uncollected = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    # What is counted is what is live; the cyclic garbage is told apart, by type.
    gc.set_debug(gc.DEBUG_SAVEALL)
    garbage = gc.collect()
    garbage_types = {}
    for thing in gc.garbage:
        name = type(thing).__module__ + '.' + type(thing).__qualname__
        garbage_types[name] = garbage_types.get(name, 0) + 1
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()
    if tracemalloc.is_tracing():
        tracemalloc.take_snapshot().dump(sys.argv[0] + '.%d' % _dump.count)
    census = _census(rss, uncollected, garbage_types)
    open(sys.argv[0] + '.%d.census' % _dump.count, 'w').write(json.dumps(census))
    open(sys.argv[0] + '.%d.tasks' % _dump.count, 'w').write(str(tasks))
    _dump.count += 1
_dump.count = 0
signal.signal(signal.SIGUSR1, _dump)
"""


class TracedServer(bench.Server):
    """The configuration's server, under tracemalloc, snapshotting on SIGUSR1 to ``dumps``."""

    def __init__(self, config: bench.Config, upstream_port: int, workdir: Path,
                 frames: int) -> None:
        self.port = bench.free_port()
        self.dumps = workdir / f"snap-{self.port}"
        project = Path(tempfile.mkdtemp(dir=workdir))
        if config.kind == "floor":
            run = (f"import bench_streams, uvicorn\nuvicorn.run(bench_streams.floor_app("
                   f"{upstream_port}), host='127.0.0.1', port={self.port}, "
                   f"log_level='warning', access_log=False)")
        else:
            (project / "relay.bloge").write_text(bench.AGENT)
            store = "memory://" if config.store == "memory" else "sqlite:///var/bloge.db"
            (project / "settings.yaml").write_text(
                bench.SETTINGS.format(upstream=upstream_port, store=store))
            run = (f"from bloge_container.cli.app import main\nsys.argv[1:] = ['serve', '--port', "
                   f"'{self.port}']\nmain()")
        script = project / "traced.py"
        script.write_text(PRELUDE + f"FRAMES = {frames}\nsys.argv[0] = {str(self.dumps)!r}\n"
                          + run + "\n")
        env = child_env(ROOT, bench.HERE)
        self.process = subprocess.Popen([sys.executable, str(script)],
                                        cwd=project, env=env, stdout=subprocess.DEVNULL,
                                        stderr=(workdir / "server.log").open("wb"))
        bench.wait_for(self.port, self.process)
        self.taken = 0

    def snapshot(self) -> Taken:
        dump = Path(f"{self.dumps}.{self.taken}")
        self.process.send_signal(signal.SIGUSR1)
        tasks = Path(f"{dump}.tasks")
        while not tasks.exists() or not tasks.read_text():
            time.sleep(0.05)
        self.taken += 1
        census = json.loads(Path(f"{dump}.census").read_text())
        snapshot = tracemalloc.Snapshot.load(str(dump)) if dump.exists() else None
        return Taken(snapshot, int(tasks.read_text()), census)


@dataclass(frozen=True)
class Taken:
    """A snapshot, the number of live tasks then, and the census of live objects (by type:
    count and bytes; the RSS; what tracemalloc traced)."""

    snapshot: tracemalloc.Snapshot | None  # None: run with --frames 0
    tasks: int
    census: dict[str, Any]


async def open_streams(server: TracedServer, config: bench.Config, count: int,
                       tokens: int, ramp: float) -> tuple[Taken, Taken]:
    warm = await asyncio.gather(*(bench.one_stream(server.port, config, "warm", 0, None)
                                  for _ in range(bench.WARM_STREAMS)))
    if any(not s.done for s in warm):
        raise RuntimeError(f"{config.name}: the warm-up streams failed")
    await asyncio.sleep(0.5)
    before = await asyncio.to_thread(server.snapshot)
    opened = bench.Countdown(count)
    streams = [asyncio.create_task(bench.one_stream(
        server.port, config, "hold: tell me a story.", ramp * n / count, opened))
        for n in range(count)]
    everyone = asyncio.gather(*streams)
    if not tokens:  # each stream waits for its first token: what a stream holds meanwhile
        await asyncio.sleep(ramp + 2)
        during = await asyncio.to_thread(server.snapshot)
        everyone.cancel()
        await asyncio.gather(everyone, return_exceptions=True)
        return before, during
    all_open = asyncio.create_task(opened.event.wait())
    await asyncio.wait([all_open, everyone],  # type: ignore[type-var]  # a task and a gather
                       return_when=asyncio.FIRST_COMPLETED)
    if not all_open.done():
        failed = [s for s in await everyone if s.first_token is None]
        raise RuntimeError(f"{config.name}: {len(failed)} streams ended without a token; the "
                           f"first: status ok {failed[0].status_ok}, last frame "
                           f"{failed[0].last_frame[-300:]!r}")
    # The streams hold after their first ``tokens``: the last to start has them all by then.
    await asyncio.sleep((tokens - 1) * bench.TOKEN_SECONDS + 0.5 if tokens > 1 else 0)
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
    innermost_first = list(reversed(trace))  # a Traceback lists the oldest frame first
    for frame in innermost_first:
        name = frame.filename
        if "/bloge/" in name or "bench_streams" in name:
            return f"{_short(name)}:{frame.lineno}"
    for frame in innermost_first:
        if "site-packages" in frame.filename:
            return f"{_short(frame.filename)}:{frame.lineno}"
    return f"{_short(innermost_first[0].filename)}:{innermost_first[0].lineno}"


def _short(name: str) -> str:
    for cut in ("site-packages/", "/bloge/", "/python3.11/"):
        if cut in name:
            return name.split(cut, 1)[1] if cut != "/bloge/" else "bloge/" + name.split(cut, 1)[1]
    return name


def report(count: int, before: Taken, during: Taken, top: int) -> None:
    rss = during.census["rss_kib"] - before.census["rss_kib"]
    print(f"   RSS: {rss / count:.1f} KiB/stream" + ("" if before.snapshot is None else
                                                     " (tracemalloc's own traces included)")
          + f"; {(during.tasks - before.tasks) / count:.2f} live tasks/stream")
    if during.census["pymalloc"]:  # tracemalloc's hooks leave pymalloc's stats unprinted
        pymalloc = {name: (during.census["pymalloc"][name] - before.census["pymalloc"][name])
                    / count / 1024 for name in ("allocated", "available")}
        print(f"   pymalloc: {pymalloc['allocated']:.2f} KiB/stream in blocks in use, "
              f"{pymalloc['available']:.2f} KiB/stream in free blocks of its pools")
        free_blocks(count, before.census["pymalloc"], during.census["pymalloc"])
    kinds = during.census["garbage"]
    print(f"   cyclic garbage the collector had not yet freed: "
          f"{sum(kinds.values()) / count:.0f} objects/stream (" + ", ".join(
              f"{n / count:.1f} {name}" for name, n in sorted(kinds.items(),
                                                               key=lambda kv: -kv[1])[:12])
          + ")")
    census(count, before.census["types"], during.census["types"], top)
    if before.snapshot is not None and during.snapshot is not None:
        traced(count, before.snapshot, during.snapshot, during.census, top)


def free_blocks(count: int, before: dict[str, Any], during: dict[str, Any]) -> None:
    """Print what pymalloc's arenas grew by per stream, and its free blocks by size class
    (those over 32 B per stream): temporaries that many streams held at once (a burst of
    starts, say) leave them behind."""
    arenas = (during["arenas"] - before["arenas"]) / count / 1024
    free = {size: (blocks - before["classes"].get(size, 0)) * int(size) / count
            for size, blocks in during["classes"].items()}
    print(f"   pymalloc's arenas: {arenas:.2f} KiB/stream (blocks, free blocks, empty pools "
          "and headers); free blocks by size class, B/stream: "
          + ", ".join(f"{size}: {per:.0f}" for size, per in free.items() if abs(per) > 32))


def traced(count: int, before: tracemalloc.Snapshot, during: tracemalloc.Snapshot,
           census: dict[str, Any], top: int) -> None:
    """Print what tracemalloc traced per stream: in all, its cyclic garbage, by the line that
    asked for it and by the file that allocated it."""
    first, second = (s.filter_traces(NOISE) for s in (before, during))
    total = (sum(s.size for s in second.statistics("filename"))
             - sum(s.size for s in first.statistics("filename")))
    garbage = census["uncollected"] - census["traced"]
    print(f"   traced: {total / count / 1024:.1f} KiB/stream live, and {garbage / count / 1024:.1f}"
          f" KiB/stream of cyclic garbage")
    by_asker: dict[str, int] = {}
    for stat in second.compare_to(first, "traceback"):
        key = asker(stat.traceback)
        by_asker[key] = by_asker.get(key, 0) + stat.size_diff
    by_file: dict[str, int] = {}
    for stat in second.compare_to(first, "filename"):
        key = _short(stat.traceback[-1].filename)
        by_file[key] = by_file.get(key, 0) + stat.size_diff
    for title, table in (("by asking line", by_asker), ("by allocating file", by_file)):
        print(f"   {title}:")
        for key, size in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"     {size / count:8.0f} B/stream  {key}")


def census(count: int, before: dict[str, list[int]], during: dict[str, list[int]],
           top: int) -> None:
    """Print the objects the collector tracks that each open stream adds, by type: how many
    and their bytes (sys.getsizeof: a coroutine's includes its frame; a dict's its table,
    not its keys and values)."""
    added = {name: (n - before.get(name, (0, 0))[0], size - before.get(name, (0, 0))[1])
             for name, (n, size) in during.items()}
    print(f"   collector-tracked objects, per stream: "
          f"{sum(n for n, _ in added.values()) / count:.1f} objects, "
          f"{sum(size for _, size in added.values()) / count:.0f} B; by type:")
    for name, (n, size) in sorted(added.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"     {size / count:8.0f} B/stream  {n / count:6.2f}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("count", type=int)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--frames", type=int, default=40,
                        help="the frames tracemalloc keeps per allocation; 0: no tracemalloc "
                        "(RSS, tasks and the collector's census only, at full speed)")
    parser.add_argument("--tokens", type=int, default=1,
                        help="the tokens each stream relays before it holds (what a stream "
                        "holds per token relayed shows as the difference with --tokens 1; 0: "
                        "snapshot while every stream still waits for its first token)")
    parser.add_argument("--ramp", type=float, default=bench.RAMP_SECONDS,
                        help="the seconds over which the streams start (bench_streams.py's "
                        "%(default)s by default; slower keeps the server below saturation)")
    parser.add_argument("--keep", metavar="DIR", type=Path,
                        help="also save the two snapshots there (before.snap, during.snap), "
                        "to read their tracebacks")
    args = parser.parse_args()
    config = next(c for c in bench.CONFIGS if c.name == args.config)
    upstream_port = bench.free_port()
    model = subprocess.Popen([sys.executable, bench.__file__, "upstream", str(upstream_port)],
                             env={**os.environ, "BENCH_HOLD_AFTER": str(args.tokens)})
    bench.wait_for(upstream_port, model)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            server = TracedServer(config, upstream_port, Path(workdir), args.frames)
            try:
                before, during = asyncio.run(open_streams(server, config, args.count, args.tokens,
                                                          args.ramp))
            finally:
                server.stop()
            if args.keep and before.snapshot and during.snapshot:
                args.keep.mkdir(parents=True, exist_ok=True)
                before.snapshot.dump(str(args.keep / "before.snap"))
                during.snapshot.dump(str(args.keep / "during.snap"))
            print(f"{config.name}, N = {args.count}")
            report(args.count, before, during, args.top)
    finally:
        model.terminate()
        model.wait()


if __name__ == "__main__":
    main()
