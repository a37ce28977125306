"""A durable turn against its floor (issue "Performance where users feel it", row "durable
turn").

Workload: bench_store.py's 5-turn run (four model answers asking for one async tool call
each, then an answer; zero-latency model), each run on a new thread, recorded in a SQLite
file and in PostgreSQL, 1 run at a time and 50 at once. The floor, in the same run and in
alternating rounds: the same loop written by hand writing the same rows to the same tables
(bloge's schema: the thread, the run, 11 messages, 20 events, 6 checkpoints, 4 tool calls,
5 usage rows), one transaction per turn — on SQLite with ``sqlite3`` in WAL mode and
``synchronous = NORMAL``, on PostgreSQL with a psycopg pool of bloge's size, pipelined,
``synchronous_commit = off`` (bloge's settings for both). A second floor commits where bloge
does: a tool turn's model answer with its dispatched call before the tool runs (so that a
crash then is known), its result before the next model call. Figures are µs per turn (median
run / 5 one at a time; wall / (runs x 5) at 50), and this process's CPU time per turn — on a
loaded machine the steadier figure; on PostgreSQL it leaves out the server's. Target: bloge
<= 1.3x the floor.

``--instructions`` counts instead, under callgrind (valgrind), the instructions per turn of
the floor, the 2-commit floor, bloge and bloge's loop with no store, one run at a time on
SQLite: deterministic, where CPU time on a shared machine is not. Each is counted in two
processes of different run counts; the difference, per extra turn, leaves start-up out.

``--langgraph PYTHON`` adds LangGraph's SQLite and Postgres checkpointers on the same
databases and workload (bench_durable_langgraph.py, run by PYTHON: a venv with langgraph,
langgraph-checkpoint-sqlite and langgraph-checkpoint-postgres, not bloge's).

    .venv/bin/python bench/bench_durable.py [--rounds 5] [--langgraph .benchvenv/bin/python]
    .venv/bin/python bench/bench_durable.py --instructions [--valgrind /usr/bin/valgrind]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
from bench_store import POSTGRES, TURNS, ToolModel, drop, operator, postgres_url

from bloge.store import Store, open_store

CONCURRENT = 50
HERE = Path(__file__).resolve().parent


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


# -- the floor: the loop by hand, the same rows, one transaction per turn


def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    answered = sum(1 for m in messages if m["role"] == "assistant")
    if answered < TURNS - 1:
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{answered}", "name": "lookup", "arguments": '{"query": "status"}'}]}
    return {"role": "assistant", "content": "All done."}


async def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "query": arguments["query"]}


THREAD = ("INSERT INTO bloge_threads (id, agent_id, created_at, updated_at, metadata, "
          "active_run_id, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)")
RUN = ("INSERT INTO bloge_runs (id, thread_id, agent_id, status, input, usage, created_at, "
       "updated_at, worker, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
MESSAGES = ("INSERT INTO bloge_messages (thread_id, seq, run_id, kind, body, created_at) "
            "VALUES (?, ?, ?, 'message', ?, ?)")
EVENTS = ("INSERT INTO bloge_run_events (run_id, seq, last_seq, type, at, body) "
          "VALUES (?, ?, ?, ?, ?, ?)")
CHECKPOINTS = ("INSERT INTO bloge_checkpoints (run_id, turn, view, usage, created_at) "
               "VALUES (?, ?, ?, ?, ?)")
TOOL_CALL = ("INSERT INTO bloge_tool_calls (run_id, turn, call_id, position, message_seq, "
             "name, arguments, status, success, content, text_result, dispatched_at, "
             "completed_at) VALUES (?, ?, ?, 0, ?, ?, ?, 'completed', 1, ?, 0, ?, ?)")
DISPATCHED = ("INSERT INTO bloge_tool_calls (run_id, turn, call_id, position, message_seq, "
              "name, arguments, status, dispatched_at) "
              "VALUES (?, ?, ?, 0, ?, ?, ?, 'dispatched', ?)")
COMPLETED = ("UPDATE bloge_tool_calls SET status = 'completed', success = 1, content = ?, "
             "text_result = 0, completed_at = ? WHERE run_id = ? AND turn = ? AND call_id = ?")
USAGE = ("INSERT INTO bloge_usage (run_id, turn, thread_id, agent_id, model, at, input_tokens, "
         "output_tokens, cache_read_tokens, cache_write_tokens, usd, reported) "
         "VALUES (?, ?, ?, 'bench', 'gpt-4o', ?, 10, ?, 0, 0, 0.000075, 1)")
PROGRESS = "UPDATE bloge_runs SET turns = ?, usage = ?, updated_at = ? WHERE id = ?"
FINISH = ("UPDATE bloge_runs SET status = 'succeeded', exit_reason = 'stop', turns = ?, "
          "usage = ?, output = ?, finished_at = ?, updated_at = ?, lease_until = NULL "
          "WHERE id = ?")
RELEASE = ("UPDATE bloge_threads SET view = ?, active_run_id = NULL, lease_until = NULL, "
           "last_run_id = ?, updated_at = ? WHERE id = ?")

Statement = tuple[str, list[tuple[Any, ...]]]


async def hand_run(write: Callable[[list[Statement]], Awaitable[None]], *,
                   split: bool = False) -> None:
    """One run of the workload, its rows written by ``write``, a transaction a turn; with
    ``split``, at bloge's two durable points of a tool turn instead: the model's answer with
    its dispatched call before the tool runs, the tool's result before the next model call."""
    now = time.time()
    run_id, thread_id = uuid.uuid4().hex, uuid.uuid4().hex
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": "go"}]
    usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    pending: list[Statement] = [
        (THREAD, [(thread_id, "bench", now, now, "{}", run_id, now + 60)]),
        (RUN, [(run_id, thread_id, "bench", "running", dumps(messages[1:]), "{}", now, now,
                "bench", now + 60)]),
        (CHECKPOINTS, [(run_id, 0, "[[1,2]]", dumps(usage), now)]),
    ]
    written, seq = 0, 0
    events: list[tuple[Any, ...]] = []

    async def commit(statements: list[Statement], at: float) -> None:
        nonlocal pending, written, events
        rows = [(thread_id, seq, run_id, dumps(m), at)
                for seq, m in enumerate(messages[written:], start=written + 1)]
        written = len(messages)
        await write([*pending, (MESSAGES, rows), *statements,
                     (EVENTS, [(*event[:4], at, event[4]) for event in events])])
        pending, events = [], []

    for turn in range(1, TURNS + 1):
        at = time.time()
        seq += 1
        events.append((run_id, seq, seq, "on_agent_turn_started",
                       dumps({"turn_number": turn, "message_count": len(messages)})))
        answer = model(messages)
        messages.append(answer)
        answer_seq = len(messages)
        usage = {"llm_calls": turn, "prompt_tokens": 10 * turn,
                 "completion_tokens": usage["completion_tokens"] + 5}
        seq += 1
        events.append((run_id, seq, seq, "on_agent_llm_called", dumps(
            {"turn_number": turn, "model": "gpt-4o", "prompt_tokens": 10,
             "completion_tokens": 5, "finish_reason": "stop", "content": answer["content"],
             "tool_calls": answer.get("tool_calls", []), "latency_ms": 0.1})))
        statements = [(USAGE, [(run_id, turn, thread_id, at, 5)])]
        if answer.get("tool_calls"):
            call = answer["tool_calls"][0]
            seq += 1
            events.append((run_id, seq, seq, "on_agent_tool_dispatched", dumps(
                {"turn_number": turn, "tool_call_id": call["id"], "tool_name": "lookup",
                 "arguments": call["arguments"]})))
            if split:  # the answer and its dispatched call, before the tool runs
                await commit([*statements, (DISPATCHED, [(run_id, turn, call["id"], answer_seq,
                                                          "lookup", call["arguments"], at)]),
                              (PROGRESS, [(turn, dumps(usage), at, run_id)])], at)
                statements = []
            result = await lookup(json.loads(call["arguments"]))
            content = dumps(result)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            seq += 1
            events.append((run_id, seq, seq, "on_agent_tool_completed", dumps(
                {"turn_number": turn, "tool_call_id": call["id"], "tool_name": "lookup",
                 "success": True, "result": content, "latency_ms": 0.1})))
            if split:
                statements.append((COMPLETED, [(content, time.time(), run_id, turn,
                                                call["id"])]))
            else:
                statements += [
                    (TOOL_CALL, [(run_id, turn, call["id"], answer_seq, "lookup",
                                  call["arguments"], content, at, time.time())]),
                    (PROGRESS, [(turn, dumps(usage), at, run_id)]),
                ]
        view = f"[[1,{len(messages)}]]"
        statements.append((CHECKPOINTS, [(run_id, turn, view, dumps(usage), at)]))
        if turn == TURNS:
            for kind, body in (("on_agent_loop_exited", {"total_turns": turn}),
                               ("done", {"content": answer["content"], "usage": usage})):
                seq += 1
                events.append((run_id, seq, seq, kind, dumps(body)))
            statements += [(FINISH, [(turn, dumps(usage), dumps({"content": answer["content"]}),
                                      at, at, run_id)]),
                           (RELEASE, [(view, run_id, at, thread_id)])]
        await commit(statements, at)


def sqlite_writer(path: Path) -> Callable[[list[Statement]], Awaitable[None]]:
    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")

    async def write(statements: list[Statement]) -> None:
        connection.execute("BEGIN IMMEDIATE")
        for sql, rows in statements:
            connection.executemany(sql, rows)
        connection.execute("COMMIT")

    return write


async def postgres_writer(url: str) -> tuple[Callable[[list[Statement]], Awaitable[None]],
                                             Callable[[], Awaitable[None]]]:
    import psycopg_pool  # noqa: PLC0415 -- an extra, there when postgres_url() gave a URL

    schema = url.rsplit("schema=", 1)[1]

    async def configure(connection: Any) -> None:
        await connection.execute("SELECT set_config('synchronous_commit', 'off', false)")
        await connection.execute("SELECT set_config('search_path', %s, false)", (schema,))

    pool = psycopg_pool.AsyncConnectionPool(POSTGRES, min_size=8, max_size=8, open=False,
                                            configure=configure,
                                            kwargs={"autocommit": True})
    await pool.open(wait=True)
    converted: dict[str, str] = {}

    async def write(statements: list[Statement]) -> None:
        async with pool.connection() as connection, connection.pipeline(), \
                connection.transaction(), connection.cursor() as cursor:
            for sql, rows in statements:
                text = converted.get(sql) or converted.setdefault(sql, sql.replace("?", "%s"))
                await cursor.executemany(text, rows)

    return write, pool.close


# -- the measures


Run = Callable[[], Awaitable[Any]]


async def one_at_a_time(run: Run, runs: int) -> tuple[float, float]:
    """µs per turn: the median run's wall time, and this process's CPU time."""
    times = []
    cpu = time.process_time()
    for _ in range(runs):
        started = time.perf_counter()
        await run()
        times.append(time.perf_counter() - started)
    return (statistics.median(times) / TURNS * 1e6,
            (time.process_time() - cpu) / (runs * TURNS) * 1e6)


async def at_once(run: Run, runs: int) -> tuple[float, float]:
    """µs per turn of ``runs`` at once: wall time, and this process's CPU time."""
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(run() for _ in range(runs)))
    return ((time.perf_counter() - started) / (runs * TURNS) * 1e6,
            (time.process_time() - cpu) / (runs * TURNS) * 1e6)


def langgraph(python: str, backend: str, target: str, rounds: int) -> dict[str, float]:
    done = subprocess.run([python, str(HERE / "bench_durable_langgraph.py"), backend, target,
                           "--rounds", str(rounds)], capture_output=True, text=True,
                          check=True)
    return {key: float(value) for key, value in json.loads(done.stdout).items()}


async def backend(name: str, url: str, rounds: int, langgraph_python: str | None,
                  langgraph_target: str) -> None:
    store: Store = open_store(url)
    agent = operator(ToolModel(), store)
    if name == "sqlite":
        write = sqlite_writer(Path(url.removeprefix("sqlite:///")))
        close: Callable[[], Awaitable[None]] | None = None
    else:
        write, close = await postgres_writer(url)
    await agent.aexecute("go")  # the schema, the caches

    async def floor() -> None:
        await hand_run(write)

    async def split() -> None:
        await hand_run(write, split=True)

    async def bloge() -> None:
        await agent.aexecute("go")

    figures: dict[str, list[float]] = {}
    runs = 40 if name == "sqlite" else 20
    for _ in range(rounds):
        for kind, run in (("floor", floor), ("split", split), ("bloge", bloge)):
            for load, measured in (("1", await one_at_a_time(run, runs)),
                                   (str(CONCURRENT), await at_once(run, CONCURRENT))):
                figures.setdefault(f"{kind} {load}", []).append(measured[0])
                figures.setdefault(f"{kind} {load} cpu", []).append(measured[1])
        if langgraph_python is not None:
            for key, value in langgraph(langgraph_python, name, langgraph_target, 1).items():
                figures.setdefault(f"langgraph {key}", []).append(value)
    await store.aclose()
    if close is not None:
        await close()
    median = {key: statistics.median(values) for key, values in figures.items()}
    print(f"{name}: µs per turn (wall), medians of {rounds} alternating rounds")
    for load in ("1", str(CONCURRENT)):
        floor_figure = median[f"floor {load}"]
        line = (f"  {load:>2} at once  floor {floor_figure:8.1f}   bloge "
                f"{median[f'bloge {load}']:8.1f} ({median[f'bloge {load}'] / floor_figure:.2f}x)")
        if f"langgraph {load}" in median:
            line += (f"   langgraph {median[f'langgraph {load}']:8.1f} "
                     f"({median[f'langgraph {load}'] / floor_figure:.2f}x)")
        print(line)
        print(f"             floor with bloge's 2 commits a tool turn "
              f"{median[f'split {load}']:8.1f}   bloge "
              f"{median[f'bloge {load}'] / median[f'split {load}']:.2f}x that")
        floor_cpu, split_cpu, bloge_cpu = (median[f"{kind} {load} cpu"]
                                           for kind in ("floor", "split", "bloge"))
        print(f"             this process's CPU: floor {floor_cpu:8.1f}   2 commits "
              f"{split_cpu:8.1f}   bloge {bloge_cpu:8.1f} ({bloge_cpu / floor_cpu:.2f}x floor, "
              f"{bloge_cpu / split_cpu:.2f}x 2 commits)")
        if f"langgraph {load} cpu" in median:
            langgraph_cpu = median[f"langgraph {load} cpu"]
            print(f"             LangGraph's process's CPU {langgraph_cpu:8.1f} "
                  f"({langgraph_cpu / floor_cpu:.2f}x floor; bloge "
                  f"{bloge_cpu / langgraph_cpu:.2f}x LangGraph)")


# -- instructions per turn, under callgrind

KINDS = ("floor", "split", "bloge", "loop")
#: Runs in the two processes compared: 250 turns apart, over which the WAL's checkpoints
#: (one every 1,000 pages written) and the random ids' page splits average out.
COUNTED = (10, 60)


async def count(kind: str, runs: int) -> None:
    """``runs`` runs of ``kind`` on SQLite after a warm-up, for callgrind to count."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/bloge.db"
        store: Store = open_store(url)
        await operator(ToolModel(), store).aexecute("go")  # the schema
        if kind in ("floor", "split"):
            write = sqlite_writer(Path(url.removeprefix("sqlite:///")))

            async def run() -> None:
                await hand_run(write, split=kind == "split")
        else:
            agent = operator(ToolModel(), store if kind == "bloge" else None)

            async def run() -> None:
                await agent.aexecute("go")
        for _ in range(5):  # the caches, the statements prepared
            await run()
        for _ in range(runs):
            await run()
        await store.aclose()


def instructions(valgrind: str, kind: str, runs: int) -> int:
    """The instructions a process running ``runs`` runs of ``kind`` executes."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [valgrind, "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.out",
             sys.executable, str(Path(__file__).resolve()), "--count", kind, str(runs)],
            env={**os.environ, "PYTHONHASHSEED": "0"}, check=True, capture_output=True,
            text=True)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    raise RuntimeError(f"callgrind printed no count:\n{done.stderr}")


def per_turn_instructions(valgrind: str) -> None:
    few, many = COUNTED
    per_turn = {kind: (instructions(valgrind, kind, many) - instructions(valgrind, kind, few))
                / ((many - few) * TURNS) for kind in KINDS}
    floor, split = per_turn["floor"], per_turn["split"]
    print("sqlite: instructions per turn (callgrind), 1 run at a time")
    print(f"  floor {floor / 1e3:8.0f} K   2 commits {split / 1e3:8.0f} K   "
          f"bloge {per_turn['bloge'] / 1e3:8.0f} K ({per_turn['bloge'] / floor:.2f}x floor, "
          f"{per_turn['bloge'] / split:.2f}x 2 commits)")
    added = per_turn["bloge"] - per_turn["loop"]
    print(f"  bloge's loop with no store {per_turn['loop'] / 1e3:8.0f} K; the store adds "
          f"{added / 1e3:.0f} K ({added / floor:.2f}x the floor, {added / split:.2f}x "
          f"2 commits)")


async def main(rounds: int, langgraph_python: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        await backend("sqlite", f"sqlite:///{folder}/bloge.db", rounds, langgraph_python,
                      f"{folder}/langgraph.db")
    pg = postgres_url()
    if pg is None:
        print("postgresql: not reachable, skipped")
        return
    try:
        await backend("postgresql", pg, rounds, langgraph_python, POSTGRES)
    finally:
        drop(pg)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--langgraph", metavar="PYTHON",
                        help="an interpreter with langgraph and its checkpointers")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per turn on SQLite under callgrind")
    parser.add_argument("--valgrind", default="/usr/bin/valgrind")
    parser.add_argument("--count", nargs=2, metavar=("KIND", "RUNS"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.count:
        asyncio.run(count(arguments.count[0], int(arguments.count[1])))
        sys.exit()
    if arguments.instructions:
        per_turn_instructions(arguments.valgrind)
        sys.exit()
    if arguments.langgraph and not Path(arguments.langgraph).exists():
        sys.exit(f"no interpreter at {arguments.langgraph}")
    asyncio.run(main(arguments.rounds, arguments.langgraph))
