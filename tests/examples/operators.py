"""The example applications' real operators, with their databases in a temporary folder, and
the example agents compiled over them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from bloge import (
    AgentDef,
    AgentDslCompiler,
    LlmChatOperator,
    LlmProvider,
    LlmStreamingChatOperator,
    OperatorRegistry,
    ToolDefinition,
)
from examples.analyst.operators import MetricsFetchOperator, QueryRunnerOperator
from examples.support.operators import CreateTicketOperator, EscalateOperator, KBSearchOperator


@contextlib.contextmanager
def example_operators(folder: Path) -> Iterator[dict[str, object]]:
    """Every operator the two example agents name, closed afterwards."""
    query_runner = QueryRunnerOperator()
    try:
        yield {
            "KBSearchOperator": KBSearchOperator(),
            "CreateTicketOperator": CreateTicketOperator(db_path=folder / "tickets.db"),
            "EscalateOperator": EscalateOperator(db_path=folder / "tickets.db"),
            "MetricsFetchOperator": MetricsFetchOperator(),
            "QueryRunnerOperator": query_runner,
        }
    finally:
        query_runner.close()


@contextlib.contextmanager
def example_registry(folder: Path, provider: LlmProvider) -> Iterator[OperatorRegistry]:
    """The example operators and both chat operators over ``provider``."""
    with example_operators(folder) as operators:
        yield OperatorRegistry({
            **operators,
            "llmChat": LlmChatOperator(provider),
            "llmStreamingChat": LlmStreamingChatOperator(provider),
        })


def compile_example(registry: OperatorRegistry, package: str, name: str) -> AgentDef:
    """The bundled DSL file ``name`` of ``package``, compiled against ``registry``."""
    source = resources.files(package).joinpath(name).read_text("utf-8")
    return AgentDslCompiler(registry).compile(source)


def example_tools(folder: Path, package: str, name: str) -> tuple[ToolDefinition, ...]:
    """The tool definitions of the bundled DSL file ``name`` of ``package``."""
    with example_operators(folder) as operators:
        agent = compile_example(OperatorRegistry(operators), package, name)
    return tuple(tool.tool_definition for tool in agent.tools)


SUPPORT_DSL = ("examples.support", "agent-customer-support.bloge")
ANALYST_DSL = ("examples.analyst", "streaming-analysis-agent.bloge")
