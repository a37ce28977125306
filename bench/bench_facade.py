"""Per-turn overhead of ``bloge.Agent`` against ``AgentLoopOperator`` (issue 12, section 1).

Workload, as in bench_loop.py: 5 model calls — the first four each ask for one tool call, the
fifth answers with text — against a zero-latency model, with an async trivial tool, no
listeners. The same workload runs through:

- ``AgentLoopOperator`` with an async operator tool (``aexecute`` and the sync ``execute``);
- ``Agent`` with the chapter's ``Tool`` (async ``call(args)``: one JSON re-encoding per call)
  (``arun`` and the sync ``run``);
- ``Agent`` with an async typed function (pydantic validates each call's arguments);
- that same Agent's own ``operator.aexecute``: what the facade's wrapper costs on its engine.

    .venv/bin/python bench/bench_facade.py
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from bench_loop import TURNS, ScriptModel, per_turn_us
from bench_sync import per_call_us

from bloge import Agent, AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry

QUESTION = "Check the status."
SYNC_RUNS = 2000
ROUNDS = 3


async def lookup_operator(input: Mapping[str, Any]) -> dict[str, Any]:
    return {"ok": True, "query": input["query"]}


class LookupTool:
    name = "lookup"
    description = "Look something up"

    async def call(self, args: str) -> str:
        return json.dumps({"ok": True, "query": json.loads(args)["query"]})


async def lookup(query: str) -> dict[str, Any]:
    """Look something up."""
    return {"ok": True, "query": query}


def operator_agent() -> AgentLoopOperator:
    registry = OperatorRegistry({"Lookup": lookup_operator,
                                 "llmChat": LlmChatOperator(ScriptModel())})
    return (AgentBuilder.create("bench", registry=registry).model("m").max_turns(8)
            .tool("lookup", "Lookup", description="Look something up",
                  parameters={"type": "object", "properties": {"query": {"type": "string"}},
                              "required": ["query"]})
            .to_operator("bench"))


def sync_per_turn_us(run_once: Callable[[], object]) -> float:
    return per_call_us(run_once, SYNC_RUNS) / TURNS


def main() -> None:
    operator = operator_agent()
    chapter_tool = Agent(ScriptModel(), [LookupTool()])
    function_tool = Agent(ScriptModel(), [lookup])
    assert chapter_tool.run(QUESTION) == function_tool.run(QUESTION) == "All done."

    variants: list[tuple[str, Callable[[], float]]] = [
        ("AgentLoopOperator.aexecute, operator",
         lambda: asyncio.run(per_turn_us(lambda: operator.aexecute(QUESTION)))),
        ("Agent.arun, chapter Tool",
         lambda: asyncio.run(per_turn_us(lambda: chapter_tool.arun(QUESTION)))),
        ("Agent.arun, typed function",
         lambda: asyncio.run(per_turn_us(lambda: function_tool.arun(QUESTION)))),
        ("Agent.operator.aexecute, typed function",
         lambda: asyncio.run(per_turn_us(lambda: function_tool.operator.aexecute(QUESTION)))),
        ("AgentLoopOperator.execute (sync), operator",
         lambda: sync_per_turn_us(lambda: operator.execute(QUESTION))),
        ("Agent.run (sync), chapter Tool",
         lambda: sync_per_turn_us(lambda: chapter_tool.run(QUESTION))),
        ("Agent.run (sync), typed function",
         lambda: sync_per_turn_us(lambda: function_tool.run(QUESTION))),
    ]
    # Interleaved rounds, best of each: on a shared machine, load drifts between variants.
    samples: dict[str, list[float]] = {title: [] for title, _ in variants}
    for _ in range(ROUNDS):
        for title, measure in variants:
            samples[title].append(measure())
    for title, micros in samples.items():
        print(f"{title:44} {min(micros):7.1f} µs/turn")


if __name__ == "__main__":
    main()
