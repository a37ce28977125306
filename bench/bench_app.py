"""Application start-up (issue "The application").

Targets: ``bloge --help`` <= 300 ms wall; building the container with both example agents
<= 150 ms.

    .venv/bin/python bench/bench_app.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOGE = Path(sys.executable).with_name("bloge")

BUILD = """
import time
started = time.perf_counter()
from bloge_container import create_container
imported = time.perf_counter()
container = create_container()
agents = container.agents()
built = time.perf_counter()
assert set(agents) == {"customerSupport", "dataAnalyst"}, agents
print(f"{(imported - started) * 1e3:.1f} {(built - imported) * 1e3:.1f}")
"""


def wall_ms(command: list[str], runs: int = 10) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=REPO, check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1e3)
    return statistics.median(samples)


def main() -> None:
    print(f"bloge --help:                       {wall_ms([str(BLOGE), '--help']):7.1f} ms wall "
          "(target <= 300 ms)")
    imports, builds = [], []
    for _ in range(10):
        result = subprocess.run([sys.executable, "-c", BUILD], cwd=REPO, check=True,
                                capture_output=True, text=True)
        imported, built = map(float, result.stdout.split())
        imports.append(imported)
        builds.append(built)
    print(f"create_container() + agents():      {statistics.median(builds):7.1f} ms "
          "(target <= 150 ms; settings, registry, both agents compiled)")
    print(f"  importing the container package:  {statistics.median(imports):7.1f} ms")
    print(f"bloge agents (whole process):       {wall_ms([str(BLOGE), 'agents']):7.1f} ms wall")


if __name__ == "__main__":
    main()
