"""The bundled example agents compile against these operators, and their outputs are JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from bloge import AgentDslCompiler, OperatorContext, OperatorRegistry
from tests.examples.operators import example_operators

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[OperatorRegistry]:
    with example_operators(tmp_path) as operators:
        yield OperatorRegistry(operators)


def bundled_dsl(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text("utf-8")


@pytest.mark.parametrize(
    ("package", "name"),
    [("examples.support", "agent-customer-support.bloge"),
     ("examples.analyst", "streaming-analysis-agent.bloge")],
)
def test_the_bundled_dsl_files_are_the_public_examples_unchanged(package: str, name: str) -> None:
    bundled = resources.files(package).joinpath(name).read_bytes()
    assert bundled == (FIXTURES / name).read_bytes()


def test_the_support_agent_compiles_against_its_operators_with_string_schemas(registry: OperatorRegistry) -> None:
    agent = AgentDslCompiler(registry).compile(bundled_dsl("examples.support", "agent-customer-support.bloge"))
    assert [t.tool_definition.parameters["properties"] for t in agent.tools] == [
        {"query": {"type": "string"}},
        {name: {"type": "string"} for name in ("title", "description", "priority")},
        {"reason": {"type": "string"}},
    ]


def test_the_analyst_agent_compiles_against_its_operators_with_string_schemas(registry: OperatorRegistry) -> None:
    agent = AgentDslCompiler(registry).compile(bundled_dsl("examples.analyst", "streaming-analysis-agent.bloge"))
    assert [t.tool_definition.parameters["properties"] for t in agent.tools] == [
        {"metricName": {"type": "string"}, "timeRange": {"type": "string"}},
        {"sql": {"type": "string"}},
    ]


@pytest.mark.parametrize(
    ("operator", "arguments"),
    [("KBSearchOperator", {"query": "reset password"}),
     ("KBSearchOperator", {"query": "zzz"}),
     ("CreateTicketOperator", {"title": "t", "description": "d", "priority": "low"}),
     ("EscalateOperator", {"reason": "r"}),
     ("MetricsFetchOperator", {"metricName": "revenue", "timeRange": "this_month"}),
     ("QueryRunnerOperator", {"sql": "SELECT * FROM daily_metrics LIMIT 3"})],
)
async def test_every_output_round_trips_through_json(
    registry: OperatorRegistry, operator: str, arguments: dict[str, str]
) -> None:
    output = await registry.bound(operator).invoke(arguments, OperatorContext.root())
    assert json.loads(json.dumps(output)) == output
