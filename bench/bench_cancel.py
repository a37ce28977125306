"""How long a cancel made through another worker takes to stop a run (issue 27, item 11).

A run of a model that never answers is run by one worker (a store of its own, as another
process would have) with the default 30 s lease; a second store asks it to stop; the time from
``Store.cancel_run`` returning to the run's end is measured, on SQLite and PostgreSQL. Target:
under a second (before: the worker read the cancel at its next lease renewal, every 10 s).

    .venv/bin/python bench/bench_cancel.py     # PostgreSQL from BLOGE_TEST_POSTGRES_DSN, if up
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse
from bloge.store import open_store

POSTGRES = os.environ.get("BLOGE_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
RUNS = 5


async def one_cancel(worker_url: str) -> float:
    worker, other = open_store(worker_url), open_store(worker_url)
    started = asyncio.Event()

    async def hanging(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    registry = (OperatorRegistry.builder()
                .register("llmChat", LlmChatOperator(FunctionProvider(hanging))).build())
    definition = AgentBuilder("hang").model("gpt-4o").build()
    run = asyncio.create_task(AgentLoopOperator("hang", definition, registry, store=worker)
                              .aexecute("Hang"))
    await started.wait()
    await asyncio.sleep(random.uniform(0, 10))  # noqa: S311 -- anywhere in a renewal period
    (running,) = await other.list_runs(limit=1)
    await other.cancel_run(running.id)
    asked = time.perf_counter()
    with contextlib.suppress(asyncio.CancelledError):
        await run
    took = time.perf_counter() - asked
    await worker.aclose()
    await other.aclose()
    return took


def postgres_url() -> str | None:
    try:
        import psycopg  # noqa: PLC0415 -- an extra
    except ImportError:
        return None
    try:
        with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3) as connection:
            schema = f"bench_{uuid.uuid4().hex[:8]}"
            connection.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.OperationalError:
        return None
    return f"{POSTGRES}?schema={schema}"


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        urls = {"sqlite": f"sqlite:///{Path(folder) / 'bench.db'}"}
        postgres = postgres_url()
        if postgres is not None:
            urls["postgresql"] = postgres
        for name, url in urls.items():
            delays = [await one_cancel(url) for _ in range(RUNS)]
            print(f"{name:10} cancel -> run stopped: median {statistics.median(delays):.3f} s, "
                  f"max {max(delays):.3f} s over {RUNS} runs")


if __name__ == "__main__":
    asyncio.run(main())
