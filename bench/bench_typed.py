"""The cost of a typed result per turn, for callgrind (instruction counts, not wall-clock).

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/bench_typed.py MODE N

runs N one-turn runs of an agent answering the same JSON, MODE ``text`` (no output schema),
``fields`` (a DSL-style schema, checked by bloge's validator) or ``model`` (a pydantic model).
Run each MODE at two N and subtract: the difference over the extra runs is the cost per turn,
start-up excluded; the typed modes minus ``text`` are what validation adds. Give the runs a
private ``XDG_CACHE_HOME``, warmed by one run: the DSL parser's table cache is shared by every
checkout of the user, and one rebuilt in some runs and not others costs ~0.5e9 instructions.
"""

from __future__ import annotations

import asyncio
import sys

from pydantic import BaseModel

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider

ANSWER = '{"title": "Printer jam", "priority": "high", "tags": ["hardware", "office"]}'


class Ticket(BaseModel):
    title: str
    priority: str
    tags: list[str] | None = None


def agent(mode: str) -> AgentLoopOperator:
    registry = OperatorRegistry().register(
        "llmChat", LlmChatOperator(FunctionProvider(lambda request: ANSWER)))
    output = {"text": "", "fields": 'output { title: string, priority: "low" | "normal" | '
              '"high", tags: list<string>? }', "model": "output = Ticket"}[mode]
    definition = AgentDslCompiler(output_types={"Ticket": Ticket}).compile(
        f'agent triage {{ model = "m" {output} }}')
    return AgentLoopOperator("triage", definition, registry)


async def main(mode: str, runs: int) -> None:
    operator = agent(mode)
    await operator.aexecute("file it")  # warm: imports, schema adapters
    for _ in range(runs):
        await operator.aexecute("file it")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
