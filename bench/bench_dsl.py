"""Compile and expression-evaluation speed (issue "Foundation and the agent DSL").

Targets: compiling the customer-support example <= 2 ms after warm-up; evaluating
``finish_reason == "stop" || tool_call("x")`` <= 5 µs.

    .venv/bin/python bench/bench_dsl.py
"""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable
from pathlib import Path

from bloge import AgentDslCompiler, Expression
from bloge.agent.functions import agent_functions

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
EXAMPLE = FIXTURES / "agent-customer-support.bloge"


def best_of(fn: Callable[[], object], *, number: int, repeat: int = 7) -> float:
    """Seconds per call: the median of ``repeat`` runs of ``number`` calls."""
    runs = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(runs) / number


def main() -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    started = time.perf_counter()
    compiler = AgentDslCompiler()
    compiler.compile(source)
    first = time.perf_counter() - started
    per_compile = best_of(lambda: compiler.compile(source), number=200)

    expression = Expression.compile('finish_reason == "stop" || tool_call("x")',
                                    functions=agent_functions())
    scope = {
        "finish_reason": "tool_calls",
        "tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "a"}}],
    }
    per_eval = best_of(lambda: expression.evaluate(scope), number=200_000)

    print(f"first compile (builds the parser): {first * 1e3:8.2f} ms")
    print(f"compile customer-support example:  {per_compile * 1e3:8.3f} ms   (target <= 2 ms)")
    print(f"evaluate exit condition:           {per_eval * 1e6:8.3f} µs   (target <= 5 µs)")


if __name__ == "__main__":
    main()
