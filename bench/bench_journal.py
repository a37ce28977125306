"""Cost of recording an agent run in the event journal (issues 10 and 28).

Workload: bench_loop.py's — 5 model calls (four ask for one tool call each, the fifth
answers), an async trivial tool, a zero-latency scripted model, one counting listener —
run with and without an ``AgentEventJournalBridge`` writing JSON lines to a file in a
temporary folder (the shipped configuration: each event through the journal's chain —
SequenceNumbers, Redactor, orjson — as it is logged, the lines written in batches). That is
19 journal events per run, 3.8 per turn. Every figure includes getting the events to the
sink: each timed sample ends by flushing the journal. Alternatives measured alongside:

- capture only: a listener that appends (callback, context, payload, time) to a list — the
  floor for any deferred design;
- in-memory sink: the same chain ending in the event dicts, without JSON or I/O;
- per event: ``max_batch=1``, every event written on its own;
- with secrets: the bridge configured with redact keys and two secret values.

Also reported: wall and CPU time per turn with a model that answers after 1 ms, and the cost
per event of logging (the chain, in the callback) and of writing (at flush). The 1 ms model
is measured twice:

- served: a model server in another process that answers each request 1 ms after it came,
  over TCP on 127.0.0.1, as a real model does;
- timer: ``asyncio.sleep(0.001)`` in the model.

And the journal alone: a run's callbacks replayed on a bridge, the least disturbed of 300
samples (the figure to compare on a busy machine).

    .venv/bin/python bench/bench_journal.py

Criterion (issue 28): the journal's cost per turn against a turn whose model answers in
50 ms. A speed trick stays only if it is worth more than 1% of that turn (500 µs).
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench_loop import RUNS, TURNS, AsyncLookup, CountingListener, ScriptModel

from bloge import AgentBuilder, AgentExecutionListener, LlmChatOperator, OperatorRegistry
from bloge.agent.listeners import CALLBACKS
from bloge.journal import AgentEventJournalBridge, EventJournal, InMemorySink

SAMPLES = 5


def agent(*listeners: AgentExecutionListener, model: ScriptModel | None = None) -> Any:
    registry = OperatorRegistry({"Lookup": AsyncLookup(),
                                 "llmChat": LlmChatOperator(model or ScriptModel())})
    return (AgentBuilder.create("bench", registry=registry).model("m").max_turns(10)
            .tool("lookup", "Lookup", description="Look something up",
                  input={"query": "tool_args.query"})
            .to_operator("bench", listeners=[CountingListener(), *listeners]))


class SlowModel(ScriptModel):
    """The same script, each answer after ``delay`` seconds (a very fast real model)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def chat(self, request: Any) -> Any:
        await asyncio.sleep(self.delay)
        return await super().chat(request)


#: A model server: answers each line it reads 1 ms later with the same line.
SERVER = """
import socket, sys, threading, time
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
def answer(connection):
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lines = connection.makefile("rb")
    for line in lines:
        time.sleep(float(sys.argv[1]))
        connection.sendall(line)
while True:
    threading.Thread(target=answer, args=(server.accept()[0],), daemon=True).start()
"""


class ServedModel(ScriptModel):
    """The same script, each answer after a round trip to the model server on ``port``."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def chat(self, request: Any) -> Any:
        if self.connection is None:
            self.connection = await asyncio.open_connection("127.0.0.1", self.port)
            self.connection[1].get_extra_info("socket").setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader, writer = self.connection
        writer.write(b"chat\n")
        await reader.readline()
        return await super().chat(request)


class Recorder(AgentExecutionListener):
    """Keeps (callback, context, payload) of every callback, to replay them."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object, object]] = []
        for callback in CALLBACKS:
            setattr(self, callback, partial(self._record, callback))

    def _record(self, callback: str, context: object, payload: object) -> None:
        self.events.append((callback, context, payload))


class CaptureOnly(AgentExecutionListener):
    """Keeps (callback, context, payload, time) tuples; forgets them when the loop exits."""

    def __init__(self) -> None:
        self.captured: list[tuple[str, object, object, float]] = []
        for callback in CALLBACKS:
            setattr(self, callback, self._capturer(callback))

    def _capturer(self, callback: str) -> Callable[[object, object], None]:
        append = self.captured.append
        clear = self.captured.clear
        exits = callback == "on_agent_loop_exited"

        def capture(context: object, payload: object) -> None:
            append((callback, context, payload, time.time()))
            if exits:
                clear()

        return capture


async def per_turn_us(run_once: Callable[[], Awaitable[object]],
                      settle: Callable[[], None], reset: Callable[[], None]) -> float:
    """Median µs per turn over SAMPLES samples of RUNS runs, each ending with ``settle()``."""
    for _ in range(200):
        await run_once()
    settle()
    samples = []
    for _ in range(SAMPLES):
        reset()
        started = time.perf_counter()
        for _ in range(RUNS):
            await run_once()
        settle()
        samples.append((time.perf_counter() - started) / (RUNS * TURNS) * 1e6)
    return statistics.median(samples)


def truncate(path: Path) -> Callable[[], None]:
    return lambda: os.truncate(path, 0)


def nothing() -> None:
    return None


async def measure(folder: Path) -> dict[str, float]:
    results: dict[str, float] = {}
    base = agent()
    results["no journal (one counting listener)"] = await per_turn_us(
        lambda: base.aexecute("Check the status."), nothing, nothing)

    capture = agent(CaptureOnly())
    results["capture only (tuple per callback)"] = await per_turn_us(
        lambda: capture.aexecute("Check the status."), nothing, nothing)

    memory_sink = InMemorySink()
    in_memory = agent(AgentEventJournalBridge(EventJournal(memory_sink)))

    async def run_in_memory() -> None:
        await in_memory.aexecute("Check the status.")
        memory_sink.events.clear()  # keeping 38,000 dicts per sample would time the GC

    results["bridge -> in-memory sink (structlog chain)"] = await per_turn_us(
        run_in_memory, nothing, nothing)

    variants: list[tuple[str, Callable[[Path], EventJournal], dict[str, Any]]] = [
        ("bridge -> file, batched (shipped)", EventJournal.to_file, {}),
        ("bridge -> file, batched, with secrets", EventJournal.to_file,
         {"redact_keys": ["query", "customer_email"], "secrets": ["sk-live-0123456789",
                                                                  "sk-ant-abcdefghij"]}),
        ("bridge -> file, per event (max_batch=1)",
         lambda path: EventJournal.to_file(path, max_batch=1), {}),
    ]
    for index, (label, make, options) in enumerate(variants):
        path = folder / f"journal-{index}.jsonl"
        journal = make(path)
        recorded = agent(AgentEventJournalBridge(journal, **options))
        results[label] = await per_turn_us(
            lambda recorded=recorded: recorded.aexecute("Check the status."),
            journal.flush, truncate(path))
        journal.close()
    return results


async def with_model_latency(
    folder: Path, model: Callable[[], ScriptModel],
) -> dict[str, tuple[float, float]]:
    """(wall, CPU) µs per turn when each model answer takes 1 ms, best of 5 samples of 100
    runs, the two agents taking turns (the machine's load drifts). Closer to real use: the
    scheduled renders and writes then run while the run waits for its model."""
    runs = 100
    best: dict[str, tuple[float, float]] = {}
    with EventJournal.to_file(folder / "slow.jsonl") as journal:
        agents = {"no journal": agent(model=model()),
                  "bridge -> file": agent(AgentEventJournalBridge(journal), model=model())}
        for slow in agents.values():
            await slow.aexecute("warm up")
        for _ in range(5):
            for label, slow in agents.items():
                wall, cpu = time.perf_counter(), time.process_time()
                for _ in range(runs):
                    await slow.aexecute("Check the status.")
                journal.flush()
                sample = ((time.perf_counter() - wall) / (runs * TURNS) * 1e6,
                          (time.process_time() - cpu) / (runs * TURNS) * 1e6)
                best[label] = min(best.get(label, (math.inf, math.inf)), sample)
    return best


async def per_event_costs(folder: Path) -> dict[str, float]:
    """µs per event for each step: log (the chain, in the callback), write (at flush).

    A run's callbacks but the last (18 of 19) are replayed on a bridge inside the event loop
    (so they queue), then the journal is flushed; the two are timed apart.
    """
    recorder = Recorder()
    await agent(recorder).aexecute("Check the status.")
    # on_agent_loop_exited flushes by itself: replay without it, so flush() is timed apart.
    recorder.events = [e for e in recorder.events if e[0] != "on_agent_loop_exited"]
    events = len(recorder.events)
    n = 2_000

    def replay(bridge: AgentEventJournalBridge) -> None:
        for callback, context, payload in recorder.events:
            getattr(bridge, callback)(context, payload)

    async def costs(journal: EventJournal, **options: Any) -> tuple[float, float]:
        bridge = AgentEventJournalBridge(journal, **options)
        logged = written = math.inf
        for _ in range(5):
            logging = writing = 0.0
            for _ in range(n):
                started = time.perf_counter()
                replay(bridge)
                middle = time.perf_counter()
                journal.flush()
                logging += middle - started
                writing += time.perf_counter() - middle
                if isinstance(journal.sink, InMemorySink):
                    journal.sink.events.clear()
            logged = min(logged, logging / n / events * 1e6)
            written = min(written, writing / n / events * 1e6)
        return logged, written

    results = {}
    memory = EventJournal(InMemorySink())
    results["log: callback -> chain -> batch"], results["write, in-memory sink"] = (
        await costs(memory))
    with EventJournal.to_file(folder / "costs.jsonl") as journal:
        _, results["write, file sink (shipped)"] = await costs(journal)
    with EventJournal.to_file(folder / "costs-secrets.jsonl") as journal:
        results["log, with secrets"], _ = await costs(
            journal, redact_keys=["query"], secrets=["sk-live-0123456789"])
    return results


async def per_turn_floor(folder: Path) -> dict[str, float]:
    """µs per turn of the journal alone, min of 300 samples of 20 replayed runs (a run's 19
    callbacks, then one await): on a loaded machine the least disturbed sample is the cost."""
    recorder = Recorder()
    await agent(recorder).aexecute("Check the status.")
    secrets = {"redact_keys": ["query"], "secrets": ["sk-live-0123456789", "sk-ant-abcdefghij"]}
    variants: dict[str, tuple[EventJournal, dict[str, Any]]] = {
        "in-memory sink": (EventJournal(InMemorySink()), {}),
        "file (shipped)": (EventJournal.to_file(folder / "floor-a.jsonl"), {}),
        "file, per event (max_batch=1)": (
            EventJournal.to_file(folder / "floor-b.jsonl", max_batch=1), {}),
        "file, with secrets": (EventJournal.to_file(folder / "floor-c.jsonl"), secrets),
    }
    results = {}
    for label, (journal, options) in variants.items():
        bridge = AgentEventJournalBridge(journal, **options)
        best = math.inf
        for _ in range(300):
            started = time.perf_counter()
            for _ in range(20):
                for callback, context, payload in recorder.events:
                    getattr(bridge, callback)(context, payload)
                await asyncio.sleep(0)
            best = min(best, (time.perf_counter() - started) / 20)
            if isinstance(journal.sink, InMemorySink):
                journal.sink.events.clear()
        journal.close()
        results[label] = best / TURNS * 1e6
    return results


def main() -> None:
    delay = 0.001
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(delay)], stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        with tempfile.TemporaryDirectory() as folder:
            results = asyncio.run(measure(Path(folder)))
            costs = asyncio.run(per_event_costs(Path(folder)))
            floor = asyncio.run(per_turn_floor(Path(folder)))
            served = asyncio.run(with_model_latency(Path(folder), partial(ServedModel, port)))
            timer = asyncio.run(with_model_latency(Path(folder), partial(SlowModel, delay)))
    finally:
        server.kill()
        server.wait()
    base = results["no journal (one counting listener)"]
    print(f"workload: {TURNS} turns per run, {RUNS} runs per sample, median of {SAMPLES}; "
          f"Python {sys.version.split()[0]}")
    for label, us in results.items():
        extra = f"{us - base:+6.1f} µs  {100 * (us / base - 1):+6.1f}%  x{us / base:.2f}"
        print(f"{label:44s} {us:6.1f} µs/turn   {extra}")
    for kind, slow in (("served over TCP", served), ("timer, asyncio.sleep", timer)):
        overhead = slow["bridge -> file"][0] / slow["no journal"][0] - 1
        print(f"with a 1 ms model, {kind} (wall / CPU per turn): {100 * overhead:+.1f}% wall")
        for label, (wall, cpu) in slow.items():
            print(f"  {label:42s} {wall:8.1f} µs wall  {cpu:6.1f} µs CPU")
    print("per event (a run has 19 events; the replay leaves on_agent_loop_exited out):")
    for label, us in costs.items():
        print(f"  {label:42s} {us:6.2f} µs")
    print("the journal alone per turn (min of 300 samples):")
    for label, us in floor.items():
        print(f"  {label:42s} {us:6.1f} µs = {100 * us / 50_000:.3f}% of a 50 ms turn")
    batching = floor["file, per event (max_batch=1)"] - floor["file (shipped)"]
    print(f"batching saves {batching:.1f} µs per turn ({100 * batching / 50_000:.3f}% of a 50 ms "
          "turn; a speed trick must be worth > 1%)")

if __name__ == "__main__":
    main()
