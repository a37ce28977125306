"""The CLI's start (issue "Performance where users feel it", row "CLI start").

Wall time of ``bloge --help`` and of ``bloge run customerSupport "…"`` (the README's quick
start: offline model, the support example), each a fresh process with its bytecode cached
(one warm-up run first), against the floor measured in the same run, interleaved round by
round: ``python -c "import pydantic, yaml"`` plus the run's own work (the second ``bloge
run``'s ``run_agent`` inside one process: the store, the agent, its model and tool calls,
the printing); beside it, what declaring one pydantic model costs. Each figure is the
process's CPU time (user + system), steadier than its wall time on a loaded machine;
unloaded the two are within a few ms. Medians; targets: run
<= 250 ms, help <= 100 ms. ``--imports`` adds the slowest imports of one run (``python -X
importtime``), for where the rest goes. ``--instructions`` adds, once each under callgrind
(valgrind), the instructions executed: steadier than CPU time where other work shares the
cores, and the same for a step of the start-up measured alone (what typer's first pydantic
use, then the settings models, add to a bare interpreter) as for a whole command.

    .venv/bin/python bench/bench_start.py [--rounds 15] [--imports] [--instructions]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOGE = str(Path(sys.executable).parent / "bloge")
QUESTION = "How do I reset my password?"
RUN = [BLOGE, "run", "customerSupport", QUESTION]
HELP = [BLOGE, "--help"]
# Bytecode cached: written on the warm-up run even where the shell says not to.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
FLOOR_IMPORTS = [sys.executable, "-c", "import pydantic, yaml"]
# Not the floor, beside it: `import pydantic` loads almost nothing until a model is declared;
# one model loads pydantic's schema builder, pydantic-core's schemas and its plugin scan.
ONE_MODEL = [sys.executable, "-c", ("import yaml, pydantic\n"
                                   "class Settings(pydantic.BaseModel):\n    name: str = 'bloge'")]
# The start-up's steps, each a whole interpreter, to count instructions: what the CLI loads
# before bloge's own modules (typer's parameters are pydantic TypeAdapters), then the settings.
STEPS = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("import pydantic, yaml", FLOOR_IMPORTS),
    ("+ typer's pydantic use", [sys.executable, "-c", "import yaml, typer._adapters"]),
    ("+ the settings models", [sys.executable, "-c",
                               "import yaml, typer._adapters, bloge_config"]),
    ("+ the settings loaded", [sys.executable, "-c", ("import typer._adapters\n"
                               "from bloge_config import load_settings\nload_settings()")]),
    ("bloge --help", HELP),
    ("bloge run …", RUN),
]
# The second run's run_agent (store, agent, model, tool, printing), in one process.
OWN_WORK = [sys.executable, "-c", f"""
import contextlib, io, time
from bloge_container.cli import app, run
spent = []
def timed(*args, **kwargs):
    started = time.process_time()
    try:
        return run_agent(*args, **kwargs)
    finally:
        spent.append(time.process_time() - started)
run_agent, run.run_agent = run.run_agent, timed
for _ in range(2):
    with contextlib.redirect_stdout(io.StringIO()):
        app(["run", "customerSupport", {QUESTION!r}], standalone_mode=False)
print(spent[-1] * 1e3)
"""]


def cpu(command: list[str]) -> float:
    """The CPU time (user and system) of ``command``, ms: on a loaded machine a steadier
    figure than its wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=ROOT, env=ENV, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3


def own_work() -> float:
    done = subprocess.run(OWN_WORK, cwd=ROOT, env=ENV, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def instructions(valgrind: str, command: list[str]) -> int:
    """The instructions ``command`` executes, counted by callgrind."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([valgrind, "--tool=callgrind",
                               f"--callgrind-out-file={folder}/callgrind.out", *command],
                              cwd=ROOT, env=ENV, check=True, capture_output=True, text=True)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    raise RuntimeError(f"callgrind printed no count:\n{done.stderr}")


def slowest_imports(count: int = 15) -> list[tuple[int, str]]:
    done = subprocess.run(RUN, cwd=ROOT, check=True, capture_output=True, text=True,
                          env={**ENV, "PYTHONPROFILEIMPORTTIME": "1"})
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--imports", action="store_true")
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    for command in (RUN, HELP, FLOOR_IMPORTS, ONE_MODEL):
        cpu(command)  # bytecode written, files in the page cache
    times: dict[str, list[float]] = {"run": [], "help": [], "imports": [], "own": [],
                                     "model": []}
    for _ in range(args.rounds):
        times["imports"].append(cpu(FLOOR_IMPORTS))
        times["model"].append(cpu(ONE_MODEL))
        times["run"].append(cpu(RUN))
        times["help"].append(cpu(HELP))
        times["own"].append(own_work())
    median = {name: statistics.median(values) for name, values in times.items()}
    floor = median["imports"] + median["own"]
    print(f"medians of {args.rounds} rounds, CPU ms (user + system; each a fresh process)")
    print(f"  import pydantic, yaml   {median['imports']:7.1f}")
    print(f"  the run's own work      {median['own']:7.1f}")
    print(f"  floor                   {floor:7.1f}")
    print(f"  (one pydantic model     {median['model']:7.1f}: what using pydantic costs)")
    print(f"  bloge run …             {median['run']:7.1f}   {median['run'] / floor:.2f}x floor"
          "   (target <= 250 ms)")
    print(f"  bloge --help            {median['help']:7.1f}   "
          f"{median['help'] / median['imports']:.2f}x import pydantic, yaml   (target <= 100 ms)")
    if args.instructions:
        valgrind = shutil.which("valgrind")
        if valgrind is None:
            raise SystemExit("--instructions needs valgrind")
        print("instructions executed (callgrind, millions; one process each)")
        for name, command in STEPS:
            print(f"  {name:26s}{instructions(valgrind, command) / 1e6:7.0f}")
    if args.imports:
        print("slowest imports of one run (cumulative ms)")
        for cumulative, name in slowest_imports():
            print(f"  {cumulative / 1e3:7.1f}  {name}")


if __name__ == "__main__":
    main()
