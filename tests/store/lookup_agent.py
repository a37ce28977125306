"""The agent of the write-fault and store-check tests: it looks ``kb`` up, then answers
"Found it."."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ToolCall
from bloge.store import RecordedRuns, Store

AGENT = """
agent helper {
  model = "gpt-4o"
  max_turns = 4
  tool lookup : Lookup { input { q = tool_args.q } }
}
"""


def answer(request: LlmRequest) -> LlmResponse:
    if request.messages[-1].role == "tool":
        return LlmResponse("Found it.")
    return LlmResponse("", "tool_calls", tool_calls=(ToolCall("c1", "lookup", '{"q": "kb"}'),))


def lookup_agent(store: Store | RecordedRuns, *, lookup: Callable[[dict[str, Any]], Any],
                 provider: FunctionProvider | None = None) -> AgentLoopOperator:
    """The agent on ``store``, its tool ``lookup``, its model ``provider`` (else ``answer``)."""
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(provider or FunctionProvider(answer)))
                .build())
    return AgentLoopOperator("helper", AgentDslCompiler(registry).compile(AGENT), registry,
                             store=store)
