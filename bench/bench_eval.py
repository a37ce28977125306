"""What ``bloge eval`` adds to each case over the run itself.

    .venv/bin/python bench/bench_eval.py [ROUNDS]
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p .venv/bin/python \
        bench/bench_eval.py ROUNDS floor|eval
    # per case = (Ir(ROUNDS=3) - Ir(ROUNDS=0)) / (3 * 20); the overhead: eval's minus floor's

runs the support agent's dataset (examples/support/evals/support.yaml: 20 cases, the offline
model, knowledge-base searches real, tickets and escalations replayed) two ways in one
process, interleaved ROUNDS times (default 15) on one ``memory://`` store:

- ``floor``: each case's run alone, recorded with ``RecordedRuns.record_run`` as the eval
  records it (the same input, the same replayed tools), nothing else;
- ``eval``: ``arun_dataset`` on the dataset (a case's tag, its checks, the results).

and prints the median time per case of each, and the eval's overhead per case (absolute and
as a share of the run). Run it from the repository (it reads settings.yaml). The clock of a
shared machine is noisy: the second form runs one of the two alone, for callgrind's
instruction counts.

Measured on the 20 support cases (2026-12-05): 6.99 M instructions a case for the run alone,
7.37 M with the eval around it: +0.38 M, +5.4% (the clock, on a loaded 2-core machine, said
+1.5 to +4 ms on 7 to 10 ms, from one interleaved run to the next).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bloge.agent import AgentInput
from bloge.agent.runtime import AgentEngine, RunEffects, RunObserver
from bloge.core.context import OperatorContext
from bloge.eval import ReplayEffects, arun_dataset, load_dataset
from bloge.eval.dataset import Case
from bloge.store import RecordedRuns, open_store
from bloge_container import create_container

ROOT = Path(__file__).resolve().parents[1]


def effects_of(case: Case) -> Callable[[RunObserver], RunEffects] | None:
    if not case.fixtures:
        return None

    def effects(observer: RunObserver) -> RunEffects:
        return ReplayEffects(case.fixtures, observer)

    return effects


async def main(rounds: int, only: str | None = None) -> None:
    container = create_container(project_dir=ROOT)
    agent = container.agents()["customerSupport"].operator
    dataset = load_dataset(ROOT / "examples/support/evals/support.yaml")
    engine = AgentEngine("eval:customerSupport", agent.agent_def, agent.registry,
                         listeners=agent.listeners, budgets=agent.budgets)
    floors: list[float] = []
    evals: list[float] = []
    async with open_store("memory://") as store:
        runs = RecordedRuns(store)

        async def floor() -> None:
            for case in dataset.cases:
                await runs.record_run(engine, AgentInput(case.messages), OperatorContext.root(),
                                      thread_id=None, sink=None, metadata=None,
                                      effects=effects_of(case))

        async def evaluated() -> None:
            results = await arun_dataset(dataset, agent, store=store, concurrency=1)
            assert results.pass_rate == 1.0

        await floor()  # warm: imports, the KB index, the store's statements
        await evaluated()
        if only is not None:
            for _ in range(rounds):
                await (floor() if only == "floor" else evaluated())
            return
        for index in range(rounds):
            # Each goes first in every other round: what one leaves (garbage, a bigger store)
            # falls on both alike.
            order = [(floor, floors), (evaluated, evals)]
            for work, times in order if index % 2 == 0 else reversed(order):
                started = time.perf_counter()
                await work()
                times.append((time.perf_counter() - started) / len(dataset.cases))
    run, with_eval = statistics.median(floors), statistics.median(evals)
    print(f"cases: {len(dataset.cases)}, rounds: {rounds}")
    print(f"floor (the run alone, recorded):  {run * 1e3:8.3f} ms per case")
    print(f"bloge eval (tag, checks, results): {with_eval * 1e3:8.3f} ms per case")
    print(f"overhead: {(with_eval - run) * 1e3:+.3f} ms per case "
          f"({(with_eval / run - 1) * 100:+.1f}% of the run)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15,
                     sys.argv[2] if len(sys.argv) > 2 else None))
