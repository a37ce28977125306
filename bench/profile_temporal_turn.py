"""Where a Temporal turn of bench_temporal_turn.py goes, bloge's workflow beside its floor:
the bytes of each payload one run's history holds (by event), and the CPU time of this
process (client and worker, all threads) per run, one run at a time, their runs alternating.
With ``--spy OUT``, py-spy (pip install py-spy) then samples this process while it runs
the floor's runs, then bloge's, into OUT.floor and OUT.bloge (raw, for a flame graph or
grep).

    .venv/bin/python bench/profile_temporal_turn.py [--runs 200] [--spy out.txt]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench_temporal import TURNS
from bench_temporal_turn import side_by_side
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client


async def payload_bytes(client: Client, workflow_id: str) -> dict[str, list[int]]:
    """The bytes of the payloads of each kind of event in one run's history."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    sizes: dict[str, list[int]] = defaultdict(list)
    for event in history.events:
        name = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()
        attributes = getattr(event, event.WhichOneof("attributes"))
        for field in ("input", "result"):
            if attributes.HasField(field) if field in attributes.DESCRIPTOR.fields_by_name \
                    else False:
                payloads = getattr(attributes, field).payloads
                sizes[f"{name}.{field}"].append(sum(p.ByteSize() for p in payloads))
        sizes[f"{name} (event)"].append(event.ByteSize())
    return sizes


def children_cpu() -> float:
    """CPU seconds of this process's children so far (the dev server), from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def sampling(out: str) -> subprocess.Popen[bytes]:
    """py-spy sampling this process (all its threads) into ``out``, until interrupted."""
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "-p",
                             str(os.getpid()), "-r", "500", "-f", "raw", "-o", out, "--threads",
                             "--nonblocking"])


async def main(runs: int, spy: str | None) -> None:
    async with side_by_side() as both:
        client, starts = both.client, both.starts
        for name in starts:
            print(f"{name}: payload bytes by event (count x mean; sum)")
            shape = await payload_bytes(client, f"{name}-shape")
            for kind, values in sorted(shape.items()):
                print(f"  {kind:45} {len(values):2} x {statistics.mean(values):7.1f}; "
                      f"{sum(values):6}")
        cpu: dict[str, list[float]] = {name: [] for name in starts}
        wall: dict[str, list[float]] = {name: [] for name in starts}
        server: dict[str, float] = dict.fromkeys(starts, 0.0)
        for _ in range(runs):
            for name, start in starts.items():
                began, used, served = (time.perf_counter(), time.process_time(),
                                       children_cpu())
                await start()
                cpu[name].append(time.process_time() - used)
                wall[name].append(time.perf_counter() - began)
                server[name] += children_cpu() - served
        for name in starts:
            print(f"{name}: dev server CPU per turn (mean) "
                  f"{server[name] / runs / TURNS * 1e3:.3f} ms")
        for name in starts:
            c, w = sorted(cpu[name]), sorted(wall[name])
            print(f"{name}: CPU per turn median {statistics.median(c) / TURNS * 1e3:.3f} ms "
                  f"(p25 {c[len(c) // 4] / TURNS * 1e3:.3f}, p75 "
                  f"{c[3 * len(c) // 4] / TURNS * 1e3:.3f}); wall per turn median "
                  f"{statistics.median(w) / TURNS * 1e3:.3f} ms (p25 "
                  f"{w[len(w) // 4] / TURNS * 1e3:.3f}, p75 "
                  f"{w[3 * len(w) // 4] / TURNS * 1e3:.3f})")
        ratio = {name: statistics.median(values["bloge"]) / statistics.median(values["floor"])
                 for name, values in (("CPU", cpu), ("wall", wall))}
        print(f"bloge/floor: CPU {ratio['CPU']:.3f}x, wall {ratio['wall']:.3f}x")
        if spy is not None:
            for name, start in starts.items():
                sampler = sampling(f"{spy}.{name}")
                try:
                    for _ in range(runs):
                        await start()
                finally:
                    sampler.send_signal(2)
                    await asyncio.to_thread(sampler.wait)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--spy", default=None)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.spy))
