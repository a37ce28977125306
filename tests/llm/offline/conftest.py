"""The example agents, compiled from their DSL files over their real operators, driven by the
offline model."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from bloge import (
    AgentDef,
    AgentDslCompiler,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorRegistry,
    ToolDefinition,
)
from bloge.llm.offline import OfflineProvider
from examples.analyst.operators import MetricsFetchOperator, QueryRunnerOperator
from examples.support.operators import CreateTicketOperator, EscalateOperator, KBSearchOperator


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[OperatorRegistry]:
    provider = OfflineProvider()
    query_runner = QueryRunnerOperator()
    yield OperatorRegistry({
        "KBSearchOperator": KBSearchOperator(),
        "CreateTicketOperator": CreateTicketOperator(db_path=tmp_path / "tickets.db"),
        "EscalateOperator": EscalateOperator(db_path=tmp_path / "tickets.db"),
        "MetricsFetchOperator": MetricsFetchOperator(),
        "QueryRunnerOperator": query_runner,
        "llmChat": LlmChatOperator(provider),
        "llmStreamingChat": LlmStreamingChatOperator(provider),
    })
    query_runner.close()


def compile_example(registry: OperatorRegistry, package: str, name: str) -> AgentDef:
    source = resources.files(package).joinpath(name).read_text("utf-8")
    return AgentDslCompiler(registry).compile(source)


@pytest.fixture
def support_agent(registry: OperatorRegistry) -> AgentDef:
    return compile_example(registry, "examples.support", "agent-customer-support.bloge")


@pytest.fixture
def analyst_agent(registry: OperatorRegistry) -> AgentDef:
    return compile_example(registry, "examples.analyst", "streaming-analysis-agent.bloge")


@pytest.fixture
def support_tools(support_agent: AgentDef) -> tuple[ToolDefinition, ...]:
    return tuple(tool.tool_definition for tool in support_agent.tools)


@pytest.fixture
def analyst_tools(analyst_agent: AgentDef) -> tuple[ToolDefinition, ...]:
    return tuple(tool.tool_definition for tool in analyst_agent.tools)
