"""The run store's costs (issue "Durable threads and runs").

1. Per-turn write cost: the 5-turn workload of bench_loop.py (four turns asking for one async
   tool, then an answer; zero-latency model), with no store and with each backend. Targets:
   <= 1 ms per turn with SQLite, <= 2 ms with PostgreSQL on loopback.
2. Storage: a thread of N runs, each one user message and one answer (2 messages per turn),
   full memory; the SQLite file's size after 10, 100 and 1,000 turns. Target: 1,000 turns take
   no more than about 1,000 times the bytes of one.
3. A run on a long thread: sliding_window(20) over 10,000 earlier messages against the same
   run on an empty thread. Target: <= 2x.

    .venv/bin/python bench/bench_store.py     # PostgreSQL from BLOGE_TEST_POSTGRES_DSN, if up
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.agent import AgentMemoryStrategy
from bloge.llm import LlmMessage, LlmRequest, LlmResponse, ToolCall
from bloge.store import Store, StoreWriter, open_store
from bloge.store.ops import AppendMessages, FinishRun
from bloge.store.records import RunStatus, StoredMessage

TURNS = 5
POSTGRES = os.environ.get("BLOGE_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


class ToolModel:
    """Zero latency: four tool calls, then an answer."""

    async def chat(self, request: LlmRequest) -> LlmResponse:
        answered = sum(1 for m in request.messages if m.role == "assistant")
        if answered < TURNS - 1:
            return LlmResponse("", "tool_calls", 10, 5, (
                ToolCall(f"call_{answered}", "lookup", '{"query": "status"}'),))
        return LlmResponse("All done.", prompt_tokens=10, completion_tokens=3)


class EchoModel:
    async def chat(self, request: LlmRequest) -> LlmResponse:
        return LlmResponse(f"You said: {request.messages[-1].content}", prompt_tokens=10,
                           completion_tokens=5)


async def lookup(input: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "query": input["query"]}


def operator(model: Any, store: Store | None, *, memory: Any = None) -> AgentLoopOperator:
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(model)).build())
    builder = (AgentBuilder.create("bench").model("gpt-4o").system_prompt("Be brief.")
               .max_turns(TURNS + 1).tool("lookup", "Lookup", input={"query": "tool_args.query"}))
    if memory is not None:
        builder = builder.memory(memory)
    return AgentLoopOperator("bench", builder.build(), registry, store=store)


async def per_turn(store: Store | None, runs: int) -> float:
    agent = operator(ToolModel(), store)
    for _ in range(5):
        await agent.aexecute("go")
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        await agent.aexecute("go")
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) / TURNS * 1e6


def postgres_url() -> str | None:
    try:
        import psycopg  # noqa: PLC0415 -- an extra: without it PostgreSQL is not measured
    except ImportError:
        return None
    try:
        with psycopg.connect(POSTGRES, connect_timeout=2, autocommit=True) as connection:
            schema = f"bloge_bench_{uuid.uuid4().hex[:8]}"
            connection.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.OperationalError:
        return None
    return f"{POSTGRES}?schema={schema}"


def drop(url: str) -> None:
    import psycopg  # noqa: PLC0415 -- an extra, there when postgres_url() gave a URL

    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(POSTGRES, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


async def write_costs(folder: Path) -> None:
    print("1. per turn, 5-turn runs (median; us per turn)")
    base = await per_turn(None, 400)
    print(f"   no store        {base:8.1f}")
    backends = [("memory", "memory://", 300), ("sqlite", f"sqlite:///{folder / 'w.db'}", 300)]
    pg = postgres_url()
    if pg is not None:
        backends.append(("postgresql", pg, 100))
    for name, url, runs in backends:
        store = open_store(url)
        cost = await per_turn(store, runs)
        print(f"   {name:<15} {cost:8.1f}   (+{(cost - base) / 1000:.3f} ms per turn)")
        await store.aclose()
    if pg is not None:
        drop(pg)
    else:
        print("   postgresql      (not reachable: skipped)")


async def storage(folder: Path) -> None:
    print("2. storage of one thread, 2 messages per turn (SQLite file, after VACUUM)")
    path = folder / "s.db"
    store = open_store(f"sqlite:///{path}")
    agent = operator(EchoModel(), store)
    sizes = {}
    done = 0
    for mark in (10, 100, 1000):
        while done < mark:
            await agent.aexecute(f"message number {done}", thread_id="t")
            done += 1
        await store.aclose()
        with sqlite3.connect(path) as connection:
            connection.execute("VACUUM")
        sizes[mark] = path.stat().st_size
        store = open_store(f"sqlite:///{path}")
        agent = operator(EchoModel(), store)
    await store.aclose()
    first = sizes[10] / 10
    for mark, size in sizes.items():
        print(f"   {mark:>5} turns  {size / 1024:9.1f} KiB  {size / mark:8.0f} B per turn"
              f"  ({size / mark / first:.2f}x the per-turn bytes at 10)")


async def long_thread(folder: Path) -> None:
    print("3. a sliding_window(20) run on a thread with 10,000 earlier messages (median)")
    store = open_store(f"sqlite:///{folder / 'l.db'}")
    window = AgentMemoryStrategy.SlidingWindow(20)
    agent = operator(ToolModel(), store, memory=window)
    await agent.aexecute("seed", thread_id="long")
    thread = await store.get_thread("long")
    first = thread.message_count + 1
    history = tuple(StoredMessage("long", seq, LlmMessage.user(f"earlier message {seq}"))
                    for seq in range(first, first + 10_000))
    view = ((1, 1), (first + 10_000 - 20, first + 10_000 - 1))
    await StoreWriter(store).write([AppendMessages("long", history, time.time()),
                       FinishRun("seed-view", "long", RunStatus.SUCCEEDED, "stop", 0, {}, None,
                                 None, view, time.time())])
    timings: dict[str, list[float]] = {"empty": [], "long": []}
    for round_ in range(60):
        for kind in ("empty", "long"):
            thread_id = "long" if kind == "long" else f"empty-{round_}"
            started = time.perf_counter()
            await agent.aexecute("go", thread_id=thread_id)
            timings[kind].append(time.perf_counter() - started)
    empty = statistics.median(timings["empty"][10:]) * 1e3
    long = statistics.median(timings["long"][10:]) * 1e3
    print(f"   empty thread {empty:7.2f} ms   long thread {long:7.2f} ms   "
          f"ratio {long / empty:.2f}x")
    await store.aclose()


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        await write_costs(Path(folder))
        await storage(Path(folder))
        await long_thread(Path(folder))


if __name__ == "__main__":
    asyncio.run(main())
