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
from tests.examples.operators import example_operators


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[OperatorRegistry]:
    provider = OfflineProvider()
    with example_operators(tmp_path) as operators:
        yield OperatorRegistry({
            **operators,
            "llmChat": LlmChatOperator(provider),
            "llmStreamingChat": LlmStreamingChatOperator(provider),
        })


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
