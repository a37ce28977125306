"""The program the crash test kills: an agent whose second tool round never ends.

Run as ``python crash_child.py STORE_URL LOG_DIR``. It prints ``ready`` once every call of
the second round is running and one of them has completed and is recorded, then waits to be
killed.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import RecordedRuns, Store, open_store, ops
from tests.store.probes import ProbedWriter

AGENT = """
agent shop {
  model = "gpt-4o"
  max_turns = 5
  tool lookup : Lookup { input { q = tool_args.q } }
  tool ship : Ship { input { item = tool_args.item } }
  tool refresh : Refresh { input { name = tool_args.name } }
}
"""


def model(request: LlmRequest) -> LlmResponse:
    """Turn 1 looks up a; turn 2 looks up b, ships and refreshes at once; turn 3 answers."""
    answered = sum(1 for m in request.messages if m.role == "assistant")
    if answered == 0:
        return LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "a"}'),))
    if answered == 1:
        return LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("c2", "lookup", '{"q": "b"}'),
            ToolCall("c3", "ship", '{"item": "book"}'),
            ToolCall("c4", "refresh", '{"name": "cache"}')))
    return LlmResponse("Done.")


class Tools:
    """Each call is written to ``LOG_DIR/<tool>.log``; ``hang`` makes ship and refresh wait
    for ever (the child), else they return (the resumed run)."""

    def __init__(self, logs: Path, *, hang: bool) -> None:
        self.logs = logs
        self.hang = hang
        #: Set once the store has written the result of lookup b (call c2).
        self.recorded = threading.Event()
        self.running: set[str] = set()
        self.lock = threading.Lock()

    def log(self, name: str, line: str) -> None:
        with (self.logs / f"{name}.log").open("a") as file:
            file.write(line + "\n")

    def lookup(self, input: dict) -> dict:
        self.log("lookup", input["q"])
        return {"found": input["q"]}

    def ship(self, input: dict) -> str:
        self.log("ship", input["item"])
        self.wait("ship")
        return "shipped"

    def refresh(self, input: dict) -> str:
        self.log("refresh", input["name"])
        self.wait("refresh")
        return "refreshed"

    def wait(self, name: str) -> None:
        if not self.hang:
            return
        with self.lock:
            self.running.add(name)
            both = self.running == {"ship", "refresh"}
        if both:
            # Ready once the completed call is in the ledger, not merely returned: a kill
            # before its result is written would leave its outcome unknown too.
            recorded = self.recorded.wait(timeout=120)  # a bound: the parent fails, not hangs
            line = "ready" if recorded else "c2 never recorded"
            print(line, flush=True)  # noqa: T201 -- the parent waits for this line
        threading.Event().wait()


class Refresh:
    """Refreshing twice does no harm."""

    idempotent = True

    def __init__(self, tools: Tools) -> None:
        self.tools = tools

    def execute(self, input: dict) -> str:
        return self.tools.refresh(input)


def shop(store_url: str, logs: Path, *, hang: bool,
         lease: float = 30.0) -> tuple[AgentLoopOperator, Store]:
    tools = Tools(logs, hang=hang)
    registry = (OperatorRegistry.builder()
                .register("Lookup", tools.lookup).register("Ship", tools.ship)
                .register("Refresh", Refresh(tools))
                .register("llmChat", LlmChatOperator(FunctionProvider(model))).build())
    definition = AgentDslCompiler(registry).compile(AGENT)
    store = open_store(store_url, lease=lease)
    writer = ProbedWriter(store)
    write = writer.write

    async def noting_write(batch: Sequence[ops.Op]) -> None:
        await write(batch)
        if any(isinstance(op, ops.CompleteToolCall) and op.call_id == "c2" for op in batch):
            tools.recorded.set()

    writer.write = noting_write  # type: ignore[method-assign]  # the child's probe
    return AgentLoopOperator("shop", definition, registry,
                             store=RecordedRuns(store, writer=writer)), store


if __name__ == "__main__":
    agent, _ = shop(sys.argv[1], Path(sys.argv[2]), hang=True)
    asyncio.run(agent.aexecute("Ship the book"))
