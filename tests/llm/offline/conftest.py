"""The example agents' tool definitions, compiled from their DSL files over their real
operators: the offline model's everyday tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge import ToolDefinition
from tests.examples.operators import ANALYST_DSL, SUPPORT_DSL, example_tools


@pytest.fixture
def support_tools(tmp_path: Path) -> tuple[ToolDefinition, ...]:
    return example_tools(tmp_path, *SUPPORT_DSL)


@pytest.fixture
def analyst_tools(tmp_path: Path) -> tuple[ToolDefinition, ...]:
    return example_tools(tmp_path, *ANALYST_DSL)
