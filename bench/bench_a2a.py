"""What asking an agent over A2A costs, on loopback (issue "Agents that call agents").

The same research agent (examples/a2a/research: offline model, one tool, a SQLite run store)
is asked the same question three ways, each call timed from the caller's side:

- floor: an in-process tool call of a plain function (what a tool costs the loop);
- in process: the agent's own run, as an in-process sub-agent's tool would run it;
- A2A: an ``A2aAgentTool`` call to ``bloge serve`` of that agent in another process on
  127.0.0.1 (card read once, then one ``SendMessage`` per call: a new connection, the
  JSON-RPC request, the run on the server, the task back).

The A2A overhead per call is the A2A median minus the in-process median. Wall times on a
loaded machine are noisy: read the medians side by side, from one run.

    nice .venv/bin/python bench/bench_a2a.py [calls]
"""

from __future__ import annotations

import asyncio
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from bloge import agent_operator
from bloge.a2a import A2aAgentTool
from bloge.core.context import OperatorContext
from bloge.core.operator import bind
from bloge_container import create_container

REPO = Path(__file__).resolve().parents[1]
BLOGE = Path(sys.executable).with_name("bloge")
QUESTION = "What is the history of tea?"


async def median_ms(call: Callable[[], Awaitable[object]], calls: int) -> float:
    await call()  # warm: imports, the card, the first connection
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1e3)
    return statistics.median(samples)


def in_process_agent(project: Path) -> Callable[[], Awaitable[object]]:
    """The agent's run in this process, recorded in a SQLite store as the server's are."""
    container = create_container(settings_file=project / "settings.yaml")
    definition = container.agents()["research"].definition
    operator = agent_operator("research", definition, container.operator_registry(),
                              store=container.run_store())

    async def ask() -> object:
        return await operator.aexecute(QUESTION)

    return ask


def send_message() -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                                   "parts": [{"text": QUESTION}]}}}


async def measure(url: str, project: Path, calls: int) -> None:
    ctx = OperatorContext.root()
    floor = bind("echo", lambda input: input)
    remote = A2aAgentTool(f"{url}/agents/research")
    local = in_process_agent(project)
    async with httpx.AsyncClient(timeout=60) as kept:
        rows = {
            "floor: in-process tool call": await median_ms(
                lambda: floor.invoke(QUESTION, ctx), calls),
            "in process: the agent's run": await median_ms(local, calls),
            "runs API, kept connection": await median_ms(lambda: kept.post(
                f"{url}/agents/research/runs", json={"input": QUESTION}), calls),
            "A2A SendMessage, kept conn.": await median_ms(lambda: kept.post(
                f"{url}/agents/research", json=send_message(),
                headers={"A2A-Version": "1.0"}), calls),
            "A2A tool call (A2aAgentTool)": await median_ms(
                lambda: remote.execute(QUESTION, ctx), calls),
        }
    for name, value in rows.items():
        print(f"{name:30} {value:9.3f} ms median of {calls}")
    overhead = rows["A2A tool call (A2aAgentTool)"] - rows["in process: the agent's run"]
    print(f"{'A2A overhead per call':30} {overhead:9.3f} ms (A2A tool call - in process)")


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    with tempfile.TemporaryDirectory() as scratch:
        served = Path(shutil.copytree(REPO / "examples" / "a2a" / "research",
                                      Path(scratch) / "served"))
        local = Path(shutil.copytree(served, Path(scratch) / "local"))
        with subprocess.Popen([str(BLOGE), "serve", "--port", "0"], cwd=served,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) as server:
            assert server.stderr is not None
            url, ready = None, False
            for line in server.stderr:
                found = re.search(r"running on (http://[\d.]+:\d+)", line)
                url = found[1] if found else url
                ready = ready or "Application startup complete" in line
                if url is not None and ready:
                    break
            # Keep reading its log, so that a full pipe never blocks the server.
            threading.Thread(target=server.stderr.read, daemon=True).start()
            try:
                assert url is not None, "bloge serve did not start"
                asyncio.run(measure(url, local, calls))
            finally:
                server.terminate()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()
