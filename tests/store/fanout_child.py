"""The program the sub-agent crash test kills: a parent that asks three sub-agents at once.

Run as ``python fanout_child.py STORE_URL LOG_DIR [THREAD]`` (``THREAD``: the sub-agent
tool's ``thread``, ``fresh`` by default). The parent's first round asks the
researcher about a, b and c concurrently; a and b answer at once, c calls a tool that never
returns. It prints ``ready`` once c's tool runs and the parent's ledger holds the answers of a
and b, then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.agent import SubAgentTool
from bloge.agent.caller_thread import SubAgentThread, sub_agent_thread
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import RecordedRuns, Store, open_store, ops
from tests.store.probes import ProbedWriter

PARENT = """
agent triage {
  model = "gpt-4o"
  max_tool_concurrency = 3
  tool research : agent researcher { input { question = tool_args.q } }
}
"""
RESEARCHER = """
agent researcher {
  model = "gpt-4o"
  tool slow : Slow { }
}
"""


def parent_model(request: LlmRequest) -> LlmResponse:
    """Turn 1 asks about a, b and c at once; turn 2 answers with what came back."""
    results = [m.content for m in request.messages if m.role == "tool"]
    if not results:
        return LlmResponse("", "tool_calls", tool_calls=tuple(
            ToolCall(f"r{q}", "research", f'{{"q": "{q}"}}') for q in "abc"))
    return LlmResponse("; ".join(results))


class Researcher:
    """The researcher's model: each question it answers is written to ``answered.log``; c
    first calls ``slow``, which never returns in the killed child (``hang``)."""

    def __init__(self, logs: Path, *, hang: bool) -> None:
        self.logs = logs
        self.hang = hang
        self.slow_running = threading.Event()
        self.recorded: set[str] = set()
        self.both_recorded = threading.Event()

    def model(self, request: LlmRequest) -> LlmResponse:
        question = request.messages[-1].content if request.messages[-1].role == "user" \
            else next(m.content for m in request.messages if m.role == "user")
        if question == "c" and not any(m.role == "tool" for m in request.messages):
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall("s1", "slow", "{}"),))
        with (self.logs / "answered.log").open("a") as file:
            file.write(question + "\n")
        return LlmResponse(f"answer {question}")

    def slow(self) -> str:
        with (self.logs / "slow.log").open("a") as file:
            file.write("slow\n")
        if self.hang:
            self.slow_running.set()
            ready = self.both_recorded.wait(timeout=120)  # a bound: the test fails, not hangs
            print("ready" if ready else "a and b never recorded", flush=True)  # noqa: T201 -- the test waits for this line
            threading.Event().wait()
        return "slow done"


class Slow:
    """Asking again does no harm."""

    idempotent = True

    def __init__(self, researcher: Researcher) -> None:
        self.researcher = researcher

    def execute(self, input: object) -> str:
        return self.researcher.slow()


def triage(store_url: str, logs: Path, *, hang: bool, lease: float = 30.0,
           thread: SubAgentThread = "fresh") -> tuple[AgentLoopOperator, Store]:
    """The parent operator (its runs recorded in ``store_url``, its sub-agent's on the
    ``thread`` it says) and its store."""
    store = open_store(store_url, lease=lease)
    researcher = Researcher(logs, hang=hang)
    child_registry = (OperatorRegistry.builder().register("Slow", Slow(researcher))
                      .register("llmChat", LlmChatOperator(FunctionProvider(researcher.model)))
                      .build())
    child = AgentLoopOperator("researcher", AgentDslCompiler(child_registry).compile(RESEARCHER),
                              child_registry, store=store)
    registry = (OperatorRegistry.builder()
                .register("agent:researcher", SubAgentTool(child, thread=thread))
                .register("llmChat", LlmChatOperator(FunctionProvider(parent_model))).build())
    writer = ProbedWriter(store)
    write = writer.write

    async def noting_write(batch: Sequence[ops.Op]) -> None:
        await write(batch)
        for op in batch:
            if isinstance(op, ops.CompleteToolCall) and op.call_id in ("ra", "rb"):
                researcher.recorded.add(op.call_id)
        if len(researcher.recorded) == 2:
            researcher.both_recorded.set()

    writer.write = noting_write  # type: ignore[method-assign]  # the child's probe
    parent = AgentLoopOperator("triage", AgentDslCompiler(registry).compile(PARENT), registry,
                               store=RecordedRuns(store, writer=writer))
    return parent, store


if __name__ == "__main__":
    agent, _ = triage(sys.argv[1], Path(sys.argv[2]), hang=True,
                      thread=sub_agent_thread(sys.argv[3] if len(sys.argv) > 3 else "fresh",
                                              where="fanout_child.py THREAD"))
    asyncio.run(agent.aexecute("Tell me about a, b and c"))
