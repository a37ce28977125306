"""The cost of a sub-agent call, in instructions: run under callgrind, once per variant.

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.<variant> \\
        .venv/bin/python bench/bench_subagents.py <variant> <runs>

Each run of ``tool`` and ``subagent`` is a caller's two turns on a scripted model: one tool
call, then the answer. ``tool``'s tool is a Python function; ``subagent``'s is another agent
(``as_tool()``) that answers in one turn; ``parent``'s is the same agent started from the
caller's conversation (``as_tool(context="parent")``); ``thread``'s the same agent recorded on
its caller's thread (``as_tool(thread="parent")``, with ``-recorded`` only). ``child`` is that
agent's run alone,
the floor of what a sub-agent call must cost. With ``-recorded`` both agents record their runs
in one ``memory://`` store (the child's run is a run of its own, with its parent). Compare the
totals of two run counts per variant (their difference is the cost of the extra runs alone,
without start-up): ``subagent - tool`` is what a sub-agent call costs over a plain tool call, and
``subagent - tool - child`` what the sub-agent machinery itself adds, ``parent - subagent``
what starting from the caller's conversation adds, ``thread - subagent`` what recording the
child on its caller's thread instead of a new one changes.
"""

from __future__ import annotations

import asyncio
import sys

from bloge import Agent
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, tool_call_response
from bloge.store import open_store

CALL = tool_call_response("researcher", '{"input": "capital of France?"}')
DONE = LlmResponse("It is Paris.")
ANSWER = LlmResponse("Paris.")


async def researcher(input: str) -> str:
    """Ask the researcher (async, as the sub-agent's operator is: no worker thread)."""
    return "Paris."


def caller_model(request: LlmRequest) -> LlmResponse:
    return DONE if request.messages[-1].role == "tool" else CALL


async def main(variant: str, runs: int) -> None:
    kind, _, recorded = variant.partition("-")
    store = open_store("memory://") if recorded else None
    child = Agent(FunctionProvider(lambda request: ANSWER), name="researcher", store=store)
    if kind == "child":
        for _ in range(runs):
            assert await child.arun("capital of France?") == "Paris."
        return
    tool = (child.as_tool() if kind == "subagent" else
            child.as_tool(context="parent") if kind == "parent" else
            child.as_tool(thread="parent") if kind == "thread" else researcher)
    caller = Agent(FunctionProvider(caller_model), [tool], name="triage", store=store)
    for _ in range(runs):
        assert await caller.arun("Where?") == "It is Paris."
    if store is not None:
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
