"""Per-turn overhead of the agent loop (issue "The agent runtime").

Workload: 5 model calls — the first four each ask for one tool call, the fifth answers with
text — against a zero-latency scripted model, an async trivial tool, one listener attached.
The same workload runs through ``AgentLoopOperator`` and through a minimal hand-written
asyncio loop doing the same message bookkeeping, in one process. Also reported: the same
with a sync tool (worker-thread hop), and token_budget memory over a long conversation.

    .venv/bin/python bench/bench_loop.py

Target: <= 100 µs per turn for AgentLoopOperator.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from bloge import (
    AgentBuilder,
    AgentExecutionListener,
    AgentLoopOperator,
    LlmChatOperator,
    OperatorContext,
    OperatorRegistry,
)
from bloge.agent.memory import ConversationMemory
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, LlmResponse, ToolCall

TURNS = 5
RUNS = 2000
ARGS = json.dumps({"query": "status"})


class ScriptModel:
    """Zero-latency model: four tool calls, then an answer (restarts per run)."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: LlmRequest) -> LlmResponse:
        self.calls += 1
        if self.calls % TURNS:
            return LlmResponse(finish_reason="tool_calls", prompt_tokens=10, completion_tokens=5,
                               tool_calls=(ToolCall(f"call_{self.calls}", "lookup", ARGS),))
        return LlmResponse(content="All done.", prompt_tokens=10, completion_tokens=3)

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:  # unused here
        raise NotImplementedError


class AsyncLookup:
    async def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"ok": True, "query": input["query"]}


class SyncLookup:
    def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> dict[str, Any]:
        return {"ok": True, "query": input["query"]}


class CountingListener(AgentExecutionListener):
    def __init__(self) -> None:
        self.events = 0

    def on_agent_turn_started(self, context: Any, payload: Any) -> None:
        self.events += 1

    def on_agent_llm_called(self, context: Any, payload: Any) -> None:
        self.events += 1

    def on_agent_tool_dispatched(self, context: Any, payload: Any) -> None:
        self.events += 1

    def on_agent_tool_completed(self, context: Any, payload: Any) -> None:
        self.events += 1

    def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
        self.events += 1


def bloge_agent(tool: object) -> AgentLoopOperator:
    registry = OperatorRegistry({"Lookup": tool, "llmChat": LlmChatOperator(ScriptModel())})
    return (AgentBuilder.create("bench", registry=registry).model("m").max_turns(10)
            .tool("lookup", "Lookup", description="Look something up",
                  input={"query": "tool_args.query"})
            .to_operator("bench", listeners=[CountingListener()]))


async def hand_written_loop(
    model: ScriptModel, tool: AsyncLookup, listener: CountingListener
) -> str:
    """The same bookkeeping with nothing else: messages, a JSON round trip, one listener."""
    messages = [LlmMessage.user("Check the status.")]
    tools = ()
    ctx = OperatorContext.root()
    for _turn in range(1, 11):
        listener.on_agent_turn_started(None, None)
        response = await model.chat(LlmRequest("m", tuple(messages), None, tools=tools))
        listener.on_agent_llm_called(None, None)
        messages.append(LlmMessage.assistant(response.content, response.tool_calls))
        if not response.tool_calls:
            listener.on_agent_loop_exited(None, None)
            return response.content
        for call in response.tool_calls:
            listener.on_agent_tool_dispatched(None, None)
            arguments = json.loads(call.arguments)
            result = await tool.execute({"query": arguments["query"]}, ctx)
            listener.on_agent_tool_completed(None, None)
            messages.append(LlmMessage.tool(call.id, json.dumps(result)))
    raise RuntimeError("unreachable")


async def per_turn_us(run_once: Callable[[], Awaitable[object]]) -> float:
    for _ in range(200):
        await run_once()
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(RUNS):
            await run_once()
        samples.append((time.perf_counter() - started) / (RUNS * TURNS) * 1e6)
    return statistics.median(samples)


async def token_budget_per_turn(messages: int) -> float:
    """ms per turn (append one exchange + build the view) at a conversation of ``messages``."""
    memory = ConversationMemory.token_budget([], max_tokens=10**9)
    for index in range(messages // 2):
        memory.append(LlmMessage.user(f"question {index} " * 8))
        memory.append(LlmMessage.assistant(f"answer {index} " * 8))
    started = time.perf_counter()
    rounds = 50
    for index in range(rounds):
        memory.append(LlmMessage.user(f"more {index}"))
        memory.messages()
    return (time.perf_counter() - started) / rounds * 1e3


class Sleeper:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def execute(self, input: Mapping[str, Any], ctx: OperatorContext) -> str:
        await asyncio.sleep(self.seconds)
        return "slept"


async def capped_turn_seconds(tools: int, cap: int, delay: float) -> float:
    """Wall time of one turn with ``tools`` calls that each sleep ``delay`` under ``cap``."""
    calls = tuple(ToolCall(f"c{i}", "sleep", "{}") for i in range(tools))
    answers = iter([LlmResponse(finish_reason="tool_calls", tool_calls=calls),
                    LlmResponse(content="done")])

    class TwoAnswers:
        async def chat(self, request: LlmRequest) -> LlmResponse:
            return next(answers)

    registry = OperatorRegistry({"Sleep": Sleeper(delay),
                                 "llmChat": LlmChatOperator(TwoAnswers())})
    agent = (AgentBuilder.create("cap", registry=registry).model("m").max_tool_concurrency(cap)
             .tool("sleep", "Sleep").to_operator("cap"))
    started = time.perf_counter()
    await agent.aexecute("go")
    return time.perf_counter() - started


async def main() -> None:
    async_agent = bloge_agent(AsyncLookup())
    sync_agent = bloge_agent(SyncLookup())
    model, tool, listener = ScriptModel(), AsyncLookup(), CountingListener()

    bloge_us = await per_turn_us(lambda: async_agent.aexecute("Check the status."))
    hand_us = await per_turn_us(lambda: hand_written_loop(model, tool, listener))
    sync_us = await per_turn_us(lambda: sync_agent.aexecute("Check the status."))
    print(f"AgentLoopOperator, async tool:   {bloge_us:7.1f} µs/turn   (target <= 100 µs)")
    print(f"hand-written asyncio loop:       {hand_us:7.1f} µs/turn")
    print(f"ratio bloge / hand-written:      {bloge_us / hand_us:7.2f}x")
    print(f"AgentLoopOperator, sync tool:    {sync_us:7.1f} µs/turn   (worker-thread hop)")
    for tools, cap, delay in ((8, 3, 0.05), (10, 10, 0.05), (6, 1, 0.02)):
        expected = -(-tools // cap) * delay
        took = await capped_turn_seconds(tools, cap, delay)
        print(f"{tools} tools x {delay * 1000:.0f} ms, cap {cap}: {took * 1000:7.1f} ms "
              f"(ceil(M/C)*d = {expected * 1000:.0f} ms, {100 * (took / expected - 1):+.1f}%)")
    for size in (1_000, 10_000, 100_000):
        per_turn = await token_budget_per_turn(size)
        print(f"token_budget, {size:>7,} messages: {per_turn:7.3f} ms/turn")


if __name__ == "__main__":
    asyncio.run(main())
