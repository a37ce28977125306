"""The cost of guards per turn, in instructions: run under callgrind, once per variant.

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.<variant> \\
        .venv/bin/python bench/bench_guards.py <variant> <runs>

Variants: ``none`` (no guard), ``parallel`` (one async input guard alongside the model call:
a task for the call and one for the guards, each run's first turn), ``expression`` (one
sequential ``when`` guard on each tool call). Each run is two turns on the scripted model: a
tool call, then the answer. Compare the totals of two run counts per variant (their
difference is the cost of the extra runs alone, without start-up).
"""

from __future__ import annotations

import asyncio
import sys

from bloge import Agent
from bloge.agent import GuardCheck, input_guard, tool_call_guard
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, tool_call_response

CALL = tool_call_response("refund", '{"amount": 20}')
ANSWER = LlmResponse("done")


async def refund(amount: int, reason: str = "") -> str:
    """Refund an amount."""
    return "ok"


def model(request: LlmRequest) -> LlmResponse:
    return ANSWER if request.messages[-1].role == "tool" else CALL


async def passes(check: GuardCheck) -> bool:
    return False


GUARDS = {
    "none": [],
    "parallel": [input_guard(passes, parallel=True)],
    "expression": [tool_call_guard(when='tool_name == "refund" && tool_args.amount > 500')],
}


async def main(variant: str, runs: int) -> None:
    agent = Agent(FunctionProvider(model), [refund], guards=GUARDS[variant])
    for _ in range(runs):
        output = await agent.arun_output("refund 20")
        assert output.content == "done"


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
