"""What a sync call costs: ``execute()`` on bloge's loop thread against ``asyncio.run()`` per call.

Two workloads, each run as ``agent.execute(...)`` (the facade: one long-lived loop on a
bloge thread) and as ``asyncio.run(agent.aexecute(...))`` (a fresh loop per call, which is
what the facade used to do):

- a one-turn agent on a zero-latency scripted model: the facade's own overhead;
- a one-turn agent on ``OpenAIChatProvider`` against a local HTTP server on 127.0.0.1: with
  a fresh loop per call the provider needs a fresh client and connection every time.

    .venv/bin/python bench/bench_sync.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import LlmProvider, ScriptedProvider
from bloge.llm.providers import OpenAIChatProvider
from tests.llm.providers.support_servers import OpenAISupportServer
from tests.local_server import LocalServer


def agent_on(provider: LlmProvider) -> AgentLoopOperator:
    registry = OperatorRegistry({"llmChat": LlmChatOperator(provider)})
    return AgentBuilder.create("bench", registry=registry).model("gpt-4o").to_operator("bench")


def per_call_us(call: Callable[[], object], runs: int) -> float:
    for _ in range(max(1, runs // 10)):
        call()
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(runs):
            call()
        samples.append((time.perf_counter() - started) / runs * 1e6)
    return statistics.median(samples)


def compare(title: str, agent: AgentLoopOperator, runs: int) -> None:
    facade = per_call_us(lambda: agent.execute("Hello"), runs)
    fresh = per_call_us(lambda: asyncio.run(agent.aexecute("Hello")), runs)
    print(f"{title}:")
    print(f"  execute() on the loop thread:      {facade:9.1f} µs/call")
    print(f"  asyncio.run(aexecute()) per call:  {fresh:9.1f} µs/call   ({fresh / facade:.1f}x)")


def main() -> None:
    compare("scripted model", agent_on(ScriptedProvider(*["Hi"] * 10**6)), runs=2000)
    with LocalServer(OpenAISupportServer()) as server:
        provider = OpenAIChatProvider(base_url=server.url("/v1"), api_key="sk-bench-0123456789")
        compare("OpenAIChatProvider, local HTTP server", agent_on(provider), runs=200)
        asyncio.run(provider.aclose())
        print(f"  connections opened: {server.opened}")


if __name__ == "__main__":
    main()
