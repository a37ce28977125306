"""LangGraph's side of bench_durable.py: the same 5-turn workload as a LangGraph graph (a
model node and a tool node, ``MessagesState``), each run on a new thread, checkpointed by
``AsyncSqliteSaver`` (a SQLite file) or ``AsyncPostgresSaver`` (a PostgreSQL database), 1
run at a time and 50 at once. Prints µs per turn as JSON, keyed by the number at once: wall
time (as bench_durable.py's), and this process's CPU time (its threads' included) under
"<number> cpu".

Run by an interpreter with langgraph, langgraph-checkpoint-sqlite and
langgraph-checkpoint-postgres (not bloge's dependencies):

    python bench/bench_durable_langgraph.py sqlite /tmp/lg.db
    python bench/bench_durable_langgraph.py postgresql postgresql://postgres@127.0.0.1/test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

TURNS = 5
CONCURRENT = 50


async def model(state: MessagesState) -> dict[str, Any]:
    answered = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
    if answered < TURNS - 1:
        call = {"id": f"call_{answered}", "name": "lookup", "args": {"query": "status"}}
        return {"messages": [AIMessage("", tool_calls=[call])]}
    return {"messages": [AIMessage("All done.")]}


async def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "query": arguments["query"]}


async def tools(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    results = [ToolMessage(json.dumps(await lookup(call["args"])), tool_call_id=call["id"])
               for call in last.tool_calls]
    return {"messages": results}


def route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def graph(checkpointer: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=checkpointer)


async def measure(app: Any, rounds: int) -> dict[str, float]:
    async def run() -> None:
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        await app.ainvoke({"messages": [("system", "Be brief."), ("user", "go")]}, config)

    await run()
    ones, many, ones_cpu, many_cpu = [], [], [], []
    for _ in range(rounds):
        times = []
        cpu = time.process_time()
        for _ in range(20):
            started = time.perf_counter()
            await run()
            times.append(time.perf_counter() - started)
        ones_cpu.append((time.process_time() - cpu) / (20 * TURNS) * 1e6)
        ones.append(statistics.median(times) / TURNS * 1e6)
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(run() for _ in range(CONCURRENT)))
        many.append((time.perf_counter() - started) / (CONCURRENT * TURNS) * 1e6)
        many_cpu.append((time.process_time() - cpu) / (CONCURRENT * TURNS) * 1e6)
    return {"1": statistics.median(ones), str(CONCURRENT): statistics.median(many),
            "1 cpu": statistics.median(ones_cpu),
            f"{CONCURRENT} cpu": statistics.median(many_cpu)}


async def main(backend: str, target: str, rounds: int) -> None:
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: PLC0415 -- its backend only

        async with AsyncSqliteSaver.from_conn_string(target) as saver:
            await saver.setup()
            figures = await measure(graph(saver), rounds)
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver  # noqa: PLC0415 -- its backend only
        from psycopg import AsyncConnection  # noqa: PLC0415 -- its backend only
        from psycopg.rows import dict_row  # noqa: PLC0415 -- its backend only
        from psycopg_pool import AsyncConnectionPool  # noqa: PLC0415 -- its backend only

        schema = f"lg_bench_{uuid.uuid4().hex[:8]}"
        async with await AsyncConnection.connect(target, autocommit=True) as admin:
            await admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            # bloge's pool size and commit setting, in a schema of its own.
            async with AsyncConnectionPool(target, min_size=8, max_size=8, open=False, kwargs={
                    "autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                    "options": f"-c search_path={schema} -c synchronous_commit=off"}) as pool:
                saver = AsyncPostgresSaver(pool)
                await saver.setup()
                figures = await measure(graph(saver), rounds)
        finally:
            async with await AsyncConnection.connect(target, autocommit=True) as admin:
                await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("backend", choices=["sqlite", "postgresql"])
    parser.add_argument("target", help="the SQLite file, or the PostgreSQL URL")
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.backend, arguments.target, arguments.rounds))
