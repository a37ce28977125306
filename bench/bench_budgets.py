"""What budget enforcement costs a recorded turn (issue 31): the 5-turn workload of
bench_store.py (four turns asking for one tool, then an answer; a zero-latency model) on a
store, ``RUNS`` times, under one of four budgets:

- ``none``: no limits (a recorded run still writes each model call's usage row);
- ``run``: a run budget (tokens, usd, tool and model calls): the prompt is counted before each
  call, no store round trip;
- ``thread``: a thread budget: each model call reserves and settles in the store, each tool
  round reserves its calls (2 + 1 transactions per turn);
- ``main``: the same workload without any budget API, to run against the code before budgets
  (``PYTHONPATH=<checkout of main>``).

Measure it with callgrind's instruction counts, not the clock (a shared machine)::

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p .venv/bin/python \\
        bench/bench_budgets.py sqlite thread 20
    # per turn = (Ir(RUNS=20) - Ir(RUNS=0)) / (20 * 5)

PostgreSQL (``postgresql``, from BLOGE_TEST_POSTGRES_DSN) counts this process's instructions
only: the server's work is not in them.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import LlmRequest, LlmResponse, ToolCall
from bloge.store import open_store

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


async def lookup(input: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "query": input["query"]}


def operator(store: Any, budget: str) -> AgentLoopOperator:
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(ToolModel())).build())
    builder = (AgentBuilder.create("bench").model("gpt-4o-mini").system_prompt("Be brief.")
               .max_turns(TURNS + 1).tool("lookup", "Lookup", input={"query": "tool_args.query"}))
    limits = {"tokens": 10_000_000, "usd": 1000.0, "tool_calls": 1_000_000,
              "model_calls": 1_000_000}
    if budget == "run":
        builder.budget(**limits)
    elif budget == "thread":
        builder.thread_budget(**limits)
    return AgentLoopOperator("bench", builder.build(), registry, store=store)


async def main(backend: str, budget: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = (f"sqlite:///{Path(folder) / 'bench.db'}" if backend == "sqlite"
               else f"{POSTGRES}?schema=bench_{uuid.uuid4().hex[:8]}")
        async with open_store(url) as store:
            await store.migrate()
            agent = operator(store, budget)
            for run in range(runs):
                await agent.aexecute("Check the status", thread_id=f"t{run}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
