"""What the autopilot costs (issue "bloge.autopilot").

1. Per turn of the agent loop — the hot path — with bench_loop's workload (5 model calls, 4
   tool calls, a zero-latency model, one listener): an agent without autopilot, the same agent
   with its max_tool_concurrency, max_turns and temperature bound to knobs, and the same while
   a knob changes the temperature before every run. The loop reads the same attributes either
   way (a binding replaces the agent's definition whole), so the first three should not
   differ beyond noise. The variants are measured in turns, the best of 7 rounds each.
   ``--plain`` runs only the first two, for comparison with another checkout:

       PYTHONPATH=/path/to/other/checkout .venv/bin/python bench/bench_autopilot.py --plain

2. Per decision: ``propose`` on a whitelisted knob in memory, and ``apropose`` with the audit
   record, knob value and chain head written to a SQLite file store and to PostgreSQL
   (``BLOGE_TEST_POSTGRES_DSN``; skipped when unreachable).

    .venv/bin/python bench/bench_autopilot.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_loop import AsyncLookup, CountingListener, ScriptModel, bloge_agent

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry

TURNS = 5
RUNS = 2000
ROUNDS = 7


async def per_turn_us(*runs: Callable[[], Awaitable[object]]) -> list[float]:
    """µs per turn of each of ``runs``, measured in turns (A, B, A, B, …) so that the load of
    a shared machine falls on all alike; the best round of each (the least disturbed)."""
    for run_once in runs:
        for _ in range(200):
            await run_once()
    best = [float("inf")] * len(runs)
    for _ in range(ROUNDS):
        for index, run_once in enumerate(runs):
            started = time.perf_counter()
            for _ in range(RUNS):
                await run_once()
            best[index] = min(best[index],
                              (time.perf_counter() - started) / (RUNS * TURNS) * 1e6)
    return best


def declared_agent() -> AgentLoopOperator:
    """bench_loop's agent, with a tool cap and a temperature (the values the knobs hold)."""
    registry = OperatorRegistry({"Lookup": AsyncLookup(),
                                 "llmChat": LlmChatOperator(ScriptModel())})
    return (AgentBuilder.create("bench", registry=registry).model("m").max_turns(10)
            .max_tool_concurrency(4).temperature(0.5)
            .tool("lookup", "Lookup", description="Look something up",
                  input={"query": "tool_args.query"})
            .to_operator("bench", listeners=[CountingListener()]))


async def loop_costs(*, plain_only: bool) -> None:
    plain, declared = bloge_agent(AsyncLookup()), declared_agent()
    runs = [lambda: plain.aexecute("Check the status."),
            lambda: declared.aexecute("Check the status.")]
    if not plain_only:
        bound, retuned_run = _bound_agent()
        runs += [lambda: bound.aexecute("Check the status."), retuned_run]
    figures = await per_turn_us(*runs)
    print(f"bench_loop's agent (no cap):           {figures[0]:7.1f} µs/turn")
    print(f"cap 4, temperature 0.5, no autopilot:  {figures[1]:7.1f} µs/turn")
    if plain_only:
        return
    print(f"the same, its three settings bound:    {figures[2]:7.1f} µs/turn "
          f"({100 * (figures[2] / figures[1] - 1):+.1f}%)")
    print(f"... and a knob change before each run: {figures[3]:7.1f} µs/turn "
          f"(one decision per {TURNS} turns)")


def _bound_agent() -> tuple[AgentLoopOperator, Callable[[], Awaitable[object]]]:
    from bloge.autopilot import (  # noqa: PLC0415 -- absent from a checkout --plain measures
        Autopilot,
        Knob,
        KnobTier,
        bindings,
    )

    bound = declared_agent()
    pilot = Autopilot(hold=0)
    for field, low, high, value in (("max_tool_concurrency", 1, 16, 4),
                                    ("max_turns", 5, 20, 10), ("temperature", 0, 1, 0.5)):
        live = bindings.agent_setting("bench", field)
        live.attach(bindings.retunes(bound, field))
        pilot.register_knob(Knob(field, KnobTier.WHITELIST, low, high, value, binding=live))
    values = [0.3, 0.7]

    async def retuned_run() -> object:
        values.reverse()
        pilot.propose("temperature", values[0])
        return await bound.aexecute("Check the status.")

    return bound, retuned_run


async def decision_costs() -> None:
    from bloge.autopilot import AuditLedger, Autopilot, Knob, KnobTier  # noqa: PLC0415 -- as above
    from bloge.store import open_store  # noqa: PLC0415 -- as above

    def fresh(store: object = None) -> Autopilot:
        pilot = Autopilot(store=store)  # type: ignore[arg-type]  # a Store or None
        pilot.register_knob(Knob("k", KnobTier.WHITELIST, 0, 1_000_000, 0))
        return pilot

    memory = fresh()
    count = 20_000
    started = time.perf_counter()
    for value in range(1, count + 1):
        memory.propose("k", value)
    took = (time.perf_counter() - started) / count * 1e6
    print(f"propose, in memory:                   {took:7.1f} µs/decision")
    with tempfile.TemporaryDirectory() as folder:
        urls = {"SQLite file": f"sqlite:///{Path(folder) / 'bench.db'}"}
        urls["PostgreSQL"] = os.environ.get("BLOGE_TEST_POSTGRES_DSN",
                                            "postgresql://postgres@127.0.0.1:5432/test")
        for label, url in urls.items():
            store = open_store(url)
            try:
                await store.migrate()
            except Exception as exc:  # noqa: BLE001 -- a bench reports what it could not measure
                print(f"apropose, {label}: skipped ({type(exc).__name__})")
                await store.aclose()
                continue
            ledger = AuditLedger(store)
            base = max((await ledger.knob_values()).get("k", (0.0, None, 0.0))[0], 0.0)
            pilot = fresh(store)
            await pilot.arefresh()
            n = 2000
            started = time.perf_counter()
            for value in range(1, n + 1):
                await pilot.apropose("k", base + value)
            took = (time.perf_counter() - started) / n * 1e6
            verify_started = time.perf_counter()
            verified = await ledger.verify()
            verify_ms = (time.perf_counter() - verify_started) * 1e3
            print(f"apropose, {label}:{' ' * (27 - len(label))}{took:7.1f} µs/decision "
                  f"(verify {verified.records} records: {verify_ms:.0f} ms)")
            await store.aclose()


async def main() -> None:
    plain_only = "--plain" in sys.argv
    await loop_costs(plain_only=plain_only)
    if not plain_only:
        await decision_costs()


if __name__ == "__main__":
    asyncio.run(main())
