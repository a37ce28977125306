"""The example agents, compiled from their DSL files over their real operators, driven by the
offline model with the examples' hooks (as ``settings.yaml`` registers them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bloge import AgentDef, OperatorRegistry
from bloge.llm.offline import OfflineProvider
from examples.analyst import answers as analyst_answers
from examples.analyst import queries
from examples.support import answers as support_answers
from tests.examples.operators import ANALYST_DSL, SUPPORT_DSL, compile_example, example_registry


def example_offline_model() -> OfflineProvider:
    return OfflineProvider(
        answer_formatters=[support_answers.format_answer, analyst_answers.format_answer],
        argument_fillers=[queries.fill_arguments],
    )


@pytest.fixture
def offline_registry(tmp_path: Path) -> Iterator[OperatorRegistry]:
    with example_registry(tmp_path, example_offline_model()) as registry:
        yield registry


@pytest.fixture
def support_agent(offline_registry: OperatorRegistry) -> AgentDef:
    return compile_example(offline_registry, *SUPPORT_DSL)


@pytest.fixture
def analyst_agent(offline_registry: OperatorRegistry) -> AgentDef:
    return compile_example(offline_registry, *ANALYST_DSL)
