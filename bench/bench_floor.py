"""bloge against the physical floor: the regression guards of bloge's hot paths.

Every row runs bloge and a hand-written floor in the same process, interleaved, best of N, and
prints the ratio, so that a loaded machine shifts both sides alike. Four ratios are guards
(records stay frozen dataclasses, STYLE §3, so the guards are set against that floor): per turn
<= 5x the hand-written loop, 10,000 concurrent runs <= 3x, streaming <= 1.5x per token, a
windowed run on a long thread <= 2x an empty one. A broken guard is marked ``BROKEN`` and the
script exits with status 1; the other figures are printed for the record.

- ``turn``: per turn, 5 model calls of which 4 ask for one async tool, zero-latency model; the
  floor is an asyncio loop doing the same bookkeeping with bloge's frozen records (a request,
  a response and messages per turn, a payload per callback: what STYLE §3 costs any loop), and
  for the record the same loop with plain dicts.
- ``concurrent``: 10,000 concurrent 5-turn runs whose model sleeps 10 ms per call (the floor:
  the loop with frozen records): wall time,
  memory per run (tracemalloc peak / runs) and the cyclic garbage a run leaves (objects
  ``gc.collect()`` finds after the runs with the collector paused for the count only).
- ``stream``: a 1,000-token answer, per token delivered; the floor is a producer task writing
  into a bounded queue (bloge's own architecture) and a consumer reading it.
- ``thread``: a one-turn run continuing a recorded thread of 10,000 messages (SQLite, with
  ``sliding_window(20)``), against the same run starting a new thread: the guard of a windowed
  run on a long thread, which reads its window, not the thread.
- ``history``: a run given 10,000 prior messages as its input with ``sliding_window(20)`` and
  ``token_budget(2000)``, time to the end of a one-turn run, against the same run given one
  message (for the record: the run takes in every message it is given, one pass each).
- ``sync``: a turn with a sync tool (worker-thread hop) against the same turn with an async one;
  then, on their own, a bare hop (one thread, a ``SimpleQueue`` in, ``call_soon_threadsafe``
  out: the floor of a hop through asyncio) beside ``WorkerPool.run``.
- ``import``: ``import bloge`` in a fresh interpreter against ``python -c pass``, bytecode
  cached; for the record, the same for ``from bloge import *`` (its names load on first use)
  and for a script that builds and runs a one-tool agent. In instructions:
  ``valgrind --tool=callgrind python -c "import bloge"`` (no ``--only``: one run per process).

    .venv/bin/python bench/bench_floor.py [row ...]          # default: every row
    .venv/bin/python bench/bench_floor.py turn --only bloge --runs 200   # for callgrind

With ``--only floor|bloge`` a row runs one side once, ``--runs`` times, and prints nothing: run
it twice under ``valgrind --tool=callgrind`` with two ``--runs`` and divide the difference of
the instruction counts by the difference of the runs (start-up cancels out).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from bench_loop import AsyncLookup, CountingListener, SyncLookup

from bloge import (
    AgentBuilder,
    AgentLoopOperator,
    AgentMemoryStrategy,
    LlmCalledPayload,
    LlmChatOperator,
    LlmStreamingChatOperator,
    LoopExitedPayload,
    OperatorContext,
    OperatorRegistry,
    StreamingAgentLoopOperator,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.core import WorkerPool
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, LlmResponse, ToolCall, ToolDefinition
from bloge.store import open_store

TURNS = 5
ARGS = json.dumps({"query": "status"})
Runner = Callable[[], Awaitable[object]]


# -- the workload: a scripted model, a trivial tool, one listener


class ScriptModel:
    """Four tool calls, then an answer; ``delay`` s per call. It keeps no state: the turn is
    read from the conversation's length (one message, then two per turn), so that concurrent
    runs sharing it each get the same five turns."""

    def __init__(self, delay: float = 0.0, tokens: int = 0) -> None:
        self.delay = delay
        self.tokens = tokens

    async def chat(self, request: LlmRequest) -> LlmResponse:
        if self.delay:
            await asyncio.sleep(self.delay)
        turn = len(request.messages) // 2 + 1
        if turn < TURNS:
            return LlmResponse(finish_reason="tool_calls", prompt_tokens=10, completion_tokens=5,
                               tool_calls=(ToolCall(f"call_{turn}", "lookup", ARGS),))
        return LlmResponse(content="All done.", prompt_tokens=10, completion_tokens=3)

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        return _tokens(self.tokens)


async def _tokens(count: int) -> AsyncIterator[LlmChunk]:
    for _ in range(count):
        yield LlmChunk(content="tok ")
    yield LlmChunk(done=True, finish_reason="stop", prompt_tokens=10, completion_tokens=count)


class AnswerModel:
    """Answers every call at once, with text."""

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return LlmResponse(content="Fine.", prompt_tokens=10, completion_tokens=1)

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        return _tokens(1)


def bloge_agent(tool: object, *, delay: float = 0.0,
                memory: Any = None) -> AgentLoopOperator:
    registry = OperatorRegistry({"Lookup": tool, "llmChat": LlmChatOperator(ScriptModel(delay))})
    builder = (AgentBuilder.create("bench", registry=registry).model("m").max_turns(10)
               .tool("lookup", "Lookup", description="Look something up",
                     input={"query": "tool_args.query"}))
    if memory is not None:
        builder = builder.memory(memory)
    return builder.to_operator("bench", listeners=[CountingListener()])


# -- the floor: the same bookkeeping with plain dicts


class DictModel:
    """The floor's model: the same script, answering plain dicts."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    async def chat(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if self.delay:
            await asyncio.sleep(self.delay)
        turn = len(messages) // 2 + 1
        if turn < TURNS:
            return {"content": "", "tool_calls": [
                {"id": f"call_{turn}", "name": "lookup", "arguments": ARGS}]}
        return {"content": "All done.", "tool_calls": []}


async def floor_loop(model: DictModel, tool: AsyncLookup, listener: CountingListener) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Check the status."}]
    ctx = OperatorContext.root()
    for _turn in range(10):
        listener.on_agent_turn_started(None, None)
        response = await model.chat(messages)
        listener.on_agent_llm_called(None, None)
        messages.append({"role": "assistant", **response})
        if not response["tool_calls"]:
            listener.on_agent_loop_exited(None, None)
            return str(response["content"])
        for call in response["tool_calls"]:
            listener.on_agent_tool_dispatched(None, None)
            result = await tool.execute({"query": json.loads(call["arguments"])["query"]}, ctx)
            listener.on_agent_tool_completed(None, None)
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(result)})
    raise RuntimeError("unreachable")


#: The one tool as the floor's requests carry it.
LOOKUP = ToolDefinition("lookup", "Look something up", {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})


async def record_floor_loop(model: ScriptModel, tool: AsyncLookup,
                            listener: CountingListener) -> str:
    """:func:`floor_loop` holding bloge's frozen records, as bloge must (STYLE §3): a request,
    a response and messages per turn, a payload per callback; nothing else."""
    messages = [LlmMessage.user("Check the status.")]
    ctx = OperatorContext.root()
    started = time.perf_counter()
    for turn in range(1, 11):
        listener.on_agent_turn_started(None, TurnStartedPayload(turn, len(messages)))
        called = time.perf_counter()
        response = await model.chat(LlmRequest("m", tuple(messages), tools=(LOOKUP,)))
        listener.on_agent_llm_called(None, LlmCalledPayload(
            turn, "m", response.prompt_tokens, response.completion_tokens,
            (time.perf_counter() - called) * 1e3, response.finish_reason))
        messages.append(LlmMessage.assistant(response.content, response.tool_calls))
        if not response.tool_calls:
            listener.on_agent_loop_exited(None, LoopExitedPayload(
                turn, turn, 0, (time.perf_counter() - started) * 1e3, "stop"))
            return response.content
        for call in response.tool_calls:
            listener.on_agent_tool_dispatched(None, ToolDispatchedPayload(
                turn, call.id, call.name, call.arguments))
            ran = time.perf_counter()
            result = await tool.execute({"query": json.loads(call.arguments)["query"]}, ctx)
            content = json.dumps(result)
            listener.on_agent_tool_completed(None, ToolCompletedPayload(
                turn, call.id, call.name, success=True,
                latency_ms=(time.perf_counter() - ran) * 1e3, result_summary=content))
            messages.append(LlmMessage.tool(call.id, content))
    raise RuntimeError("unreachable")


# -- measuring


async def best_seconds(runners: Mapping[str, Runner], runs: int, rounds: int) -> dict[str, float]:
    """Best time of ``runs`` calls of each runner over ``rounds`` interleaved rounds."""
    best = dict.fromkeys(runners, float("inf"))
    for runner in runners.values():
        for _ in range(max(1, runs // 10)):
            await runner()
    for _ in range(rounds):
        for name, runner in runners.items():
            started = time.perf_counter()
            for _ in range(runs):
                await runner()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


#: The titles of the guards that a row broke, for the exit status.
BROKEN: list[str] = []


async def measure(runners: Mapping[str, Runner], args: argparse.Namespace,
                  runs: int) -> dict[str, float] | None:
    """:func:`best_seconds` of ``runs`` calls; with ``--only``, that side alone, ``--runs``
    times, and ``None`` (for callgrind: nothing is printed)."""
    if args.only:
        for _ in range(args.runs):
            await runners[args.only]()
        return None
    return await best_seconds(runners, runs, args.rounds)


def ratio_line(title: str, floor: float, bloge: float, unit: str, target: str, *,
               guard: float | None = None) -> str:
    """One row's figures and ratio; with ``guard``, the ratio must be at most that."""
    ratio = bloge / floor
    verdict = ""
    if guard is not None:
        verdict = "  ok" if ratio <= guard else "  BROKEN"
        if ratio > guard:
            BROKEN.append(title.strip())
    return (f"{title:<44} floor {floor:9.2f} {unit}   bloge {bloge:9.2f} {unit}   "
            f"ratio {ratio:5.2f}x   (target {target}){verdict}")


async def row_turn(args: argparse.Namespace) -> None:
    agent = bloge_agent(AsyncLookup())
    model, tool, listener = DictModel(), AsyncLookup(), CountingListener()
    runners: dict[str, Runner] = {
        "floor": lambda: record_floor_loop(ScriptModel(), tool, listener),
        "bloge": lambda: agent.aexecute("Check the status."),
        "dicts": lambda: floor_loop(model, tool, listener),
    }
    best = await measure(runners, args, args.runs)
    if best is None:
        return
    per_turn = {name: seconds / (args.runs * TURNS) * 1e6 for name, seconds in best.items()}
    print(ratio_line("per turn (floor: the loop with frozen records)", per_turn["floor"],
                     per_turn["bloge"], "µs", "<= 5x", guard=5))
    print(ratio_line("  per turn (floor: the loop with plain dicts)", per_turn["dicts"],
                     per_turn["bloge"], "µs", "-"))


async def concurrent_seconds(start: Callable[[], Awaitable[object]], runs: int) -> float:
    started = time.perf_counter()
    await asyncio.gather(*(start() for _ in range(runs)))
    return time.perf_counter() - started


async def concurrent_bytes(start: Callable[[], Awaitable[object]], runs: int) -> float:
    gc.collect()
    tracemalloc.start()
    await asyncio.gather(*(start() for _ in range(runs)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / runs


async def cyclic_garbage(start: Callable[[], Awaitable[object]], runs: int) -> float:
    """Objects left in reference cycles per run (what the collector has to chase)."""
    gc.collect()
    gc.disable()  # only while counting: the runs' cycles must still be there to be counted
    try:
        await asyncio.gather(*(start() for _ in range(runs)))
        return gc.collect() / runs
    finally:
        gc.enable()


async def row_concurrent(args: argparse.Namespace) -> None:
    runs, delay = args.concurrent, 0.01
    agent = bloge_agent(AsyncLookup(), delay=delay)
    model, tool, listener = ScriptModel(delay), AsyncLookup(), CountingListener()
    starts: dict[str, Callable[[], Awaitable[object]]] = {
        "floor": lambda: record_floor_loop(model, tool, listener),
        "bloge": lambda: agent.aexecute("Check the status."),
    }
    if args.only:
        await asyncio.gather(*(starts[args.only]() for _ in range(args.runs)))
        return
    best = dict.fromkeys(starts, float("inf"))
    for _ in range(args.rounds):
        for name, start in starts.items():
            best[name] = min(best[name], await concurrent_seconds(start, runs))
    memory = {name: await concurrent_bytes(start, runs) for name, start in starts.items()}
    garbage = {name: await cyclic_garbage(start, runs) for name, start in starts.items()}
    floor_wall = TURNS * delay
    print(ratio_line(f"{runs:,} concurrent 5-turn runs, wall", best["floor"], best["bloge"],
                     "s ", "<= 3x", guard=3))
    print(f"{'':<44} (5 x {delay * 1e3:.0f} ms model sleeps alone: {floor_wall:.2f} s)")
    print(ratio_line("  memory per run (tracemalloc peak)", memory["floor"] / 1024,
                     memory["bloge"] / 1024, "KB", "-"))
    print(f"{'  objects in cycles per run':<44} floor {garbage['floor']:9.1f}      "
          f"bloge {garbage['bloge']:9.1f}")


def streaming_agent(tokens: int) -> StreamingAgentLoopOperator:
    registry = OperatorRegistry({"llmStreamingChat": LlmStreamingChatOperator(
        ScriptModel(tokens=tokens))})
    return (AgentBuilder.create("stream", registry=registry).model("m")
            .to_streaming_operator("stream", listeners=[CountingListener()]))


async def floor_stream(tokens: int, capacity: int) -> int:
    """A producer task writing the chunks' text into a bounded queue, a consumer reading."""
    channel: asyncio.Queue[Any] = asyncio.Queue(capacity)
    end = object()

    async def produce() -> None:
        async for chunk in _tokens(tokens):
            if chunk.content:
                await channel.put(chunk.content)
        await channel.put(end)

    producer = asyncio.create_task(produce())
    delivered = 0
    while await channel.get() is not end:
        delivered += 1
    await producer
    return delivered


async def bloge_stream(agent: StreamingAgentLoopOperator) -> int:
    delivered = 0
    async for _chunk in agent.stream("Tell me a story."):
        delivered += 1
    return delivered


async def row_stream(args: argparse.Namespace) -> None:
    tokens = 1000
    agent = streaming_agent(tokens)
    capacity = agent.agent_def.streaming_buffer_capacity
    runners: dict[str, Runner] = {
        "floor": lambda: floor_stream(tokens, capacity),
        "bloge": lambda: bloge_stream(agent),
    }
    runs = max(1, args.runs // 50)
    best = await measure(runners, args, runs)
    if best is None:
        return
    per_token = {name: seconds / (runs * tokens) * 1e6 for name, seconds in best.items()}
    print(ratio_line(f"streaming {tokens:,} tokens, per token", per_token["floor"],
                     per_token["bloge"], "µs", "<= 1.5x", guard=1.5))


def prior_messages(count: int) -> list[LlmMessage]:
    """``count`` messages of earlier exchanges, a tool round every fourth."""
    messages: list[LlmMessage] = []
    while len(messages) < count:
        index = len(messages)
        if index % 8 == 4:
            call = ToolCall(f"old_{index}", "lookup", ARGS)
            messages.append(LlmMessage.assistant("", [call]))
            messages.append(LlmMessage.tool(call.id, '{"ok": true}'))
        else:
            role = LlmMessage.user if index % 2 == 0 else LlmMessage.assistant
            messages.append(role(f"message {index} about the order status " * 2))
    return messages[:count]


async def row_history(args: argparse.Namespace) -> None:
    history = [*prior_messages(10_000), LlmMessage.user("And now?")]
    memories = {"sliding_window(20)": AgentMemoryStrategy.SlidingWindow(20),
                "token_budget(2000)": AgentMemoryStrategy.TokenBudget(2000)}
    for title, memory in memories.items():
        # A model that answers at once: the run is the cost of taking in the input.
        registry = OperatorRegistry({"llmChat": LlmChatOperator(AnswerModel())})
        agent = (AgentBuilder.create("history", registry=registry).model("m")
                 .memory(memory).to_operator("history"))
        runners: dict[str, Runner] = {
            "floor": lambda agent=agent: agent.aexecute("And now?"),
            "bloge": lambda agent=agent: agent.aexecute(history),
        }
        runs = max(1, args.runs // 10)
        best = await measure(runners, args, runs)
        if best is None:
            continue
        per_run = {name: seconds / runs * 1e3 for name, seconds in best.items()}
        print(ratio_line(f"one-turn run, 10,000 msgs in input, {title}", per_run["floor"],
                         per_run["bloge"], "ms", "-; floor = one message"))


async def row_thread(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{folder}/bench.db")
        registry = OperatorRegistry({"llmChat": LlmChatOperator(AnswerModel())})
        definition = (AgentBuilder.create("thread", registry=registry).model("m")
                      .memory(AgentMemoryStrategy.SlidingWindow(20)).build())
        agent = AgentLoopOperator("thread", definition, registry, store=store)
        long_thread = (await agent.aexecute(prior_messages(10_000))).thread_id
        runners: dict[str, Runner] = {
            "floor": lambda: agent.aexecute("And now?"),
            "bloge": lambda: agent.aexecute("And now?", thread_id=long_thread),
        }
        try:
            runs = max(1, args.runs // 20)
            best = await measure(runners, args, runs)
            if best is None:
                return
        finally:
            await store.aclose()
    per_run = {name: seconds / runs * 1e3 for name, seconds in best.items()}
    print(ratio_line("one-turn run on a 10,000-msg thread, window 20", per_run["floor"],
                     per_run["bloge"], "ms", "<= 2x; floor = new thread", guard=2))


class BareHop:
    """The least a hop through asyncio takes: one thread started beforehand, a
    ``SimpleQueue`` to it, ``call_soon_threadsafe`` back; no bounds, no cancellation."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[asyncio.Future[object], Callable[[], object]]] = (
            queue.SimpleQueue())
        threading.Thread(target=self.work, daemon=True).start()

    def work(self) -> None:
        while True:
            future, fn = self.jobs.get()
            future.get_loop().call_soon_threadsafe(future.set_result, fn())

    async def run(self, fn: Callable[[], object]) -> object:
        future = asyncio.get_running_loop().create_future()
        self.jobs.put((future, fn))
        return await future


async def row_sync(args: argparse.Namespace) -> None:
    async_agent, sync_agent = bloge_agent(AsyncLookup()), bloge_agent(SyncLookup())
    runners: dict[str, Runner] = {
        "floor": lambda: async_agent.aexecute("Check the status."),
        "bloge": lambda: sync_agent.aexecute("Check the status."),
    }
    runs = max(1, args.runs // 4)
    best = await measure(runners, args, runs)
    if best is None:
        return
    per_turn = {name: seconds / (runs * TURNS) * 1e6 for name, seconds in best.items()}
    # Four of the five turns run the tool: the hop's cost per tool turn.
    hop = (per_turn["bloge"] - per_turn["floor"]) * TURNS / (TURNS - 1)
    print(ratio_line("sync-tool turn (floor = async tool)", per_turn["floor"],
                     per_turn["bloge"], "µs", "sync turn <= 40 µs"))
    print(f"{'  worker-thread hop per tool call':<44} {hop:9.2f} µs")
    bare, pool = BareHop(), WorkerPool()
    hops: dict[str, Runner] = {"floor": lambda: bare.run(object), "bloge": lambda: pool.run(object)}
    per_hop = {name: seconds / args.runs * 1e6
               for name, seconds in (await best_seconds(hops, args.runs, args.rounds)).items()}
    print(ratio_line("  a hop alone (floor = bare hop; WorkerPool)", per_hop["floor"],
                     per_hop["bloge"], "µs", "-"))


#: One run of a built agent as a user's script does it: the curated names, a scripted model
#: asking for one sync tool, then answering.
FIRST_RUN = """
from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
from bloge.llm import ScriptedProvider, tool_call_response

class Lookup:
    def execute(self, input, ctx):
        return {"ok": True}

model = ScriptedProvider(tool_call_response("lookup", '{"query": "status"}'), "Done.")
registry = OperatorRegistry({"Lookup": Lookup(), "llmChat": LlmChatOperator(model)})
agent = (AgentBuilder.create("a", registry=registry).model("m")
         .tool("lookup", "Lookup", description="Look it up", input={"query": "tool_args.query"})
         .to_operator("a"))
assert agent.execute("Check the status.").content == "Done."
"""


def fresh_interpreter_ms(codes: Mapping[str, str], rounds: int) -> dict[str, float]:
    """Best wall time of ``python -c code`` for each code, interleaved round by round, with
    bytecode cached as an installed package has it: ``PYTHONDONTWRITEBYTECODE`` is dropped
    and an untimed first round writes the ``.pyc`` files (else the compiler is timed too)."""
    env = {name: value for name, value in os.environ.items()
           if name != "PYTHONDONTWRITEBYTECODE"}
    best = dict.fromkeys(codes, float("inf"))
    for round_ in range(rounds + 1):
        for name, code in codes.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            if round_:
                best[name] = min(best[name], time.perf_counter() - started)
    return {name: seconds * 1e3 for name, seconds in best.items()}


async def row_import(args: argparse.Namespace) -> None:
    codes = {"floor": "pass", "import": "import bloge", "names": "from bloge import *",
             "run": FIRST_RUN}
    best = fresh_interpreter_ms(codes, max(5, args.rounds * 2))
    print(ratio_line("import bloge (floor = python -c pass)", best["floor"], best["import"],
                     "ms", "bloge <= 80 ms"))
    # The names load their modules on first use: what using bloge loads, for the record.
    print(ratio_line("  from bloge import * (every public name)", best["floor"], best["names"],
                     "ms", "-"))
    print(ratio_line("  import, build and run an agent (one tool)", best["floor"], best["run"],
                     "ms", "-"))


ROWS = {"turn": row_turn, "concurrent": row_concurrent, "stream": row_stream,
        "thread": row_thread, "history": row_history, "sync": row_sync, "import": row_import}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("rows", nargs="*", metavar="row", help=", ".join(ROWS))
    parser.add_argument("--runs", type=int, default=2000, help="runs per round (turn row)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds, best kept")
    parser.add_argument("--concurrent", type=int, default=10_000, help="concurrent runs")
    parser.add_argument("--only", choices=("floor", "bloge"),
                        help="run one side once, --runs times, silently (for callgrind)")
    args = parser.parse_args()
    unknown = set(args.rows) - set(ROWS)
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}; choose from {', '.join(ROWS)}")
    if not args.only:
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}  "
              f"python {sys.version.split()[0]}")
    for row in args.rows or ROWS:
        await ROWS[row](args)
    if BROKEN:
        print(f"broken guards: {'; '.join(BROKEN)}")
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
