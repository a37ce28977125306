from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: A user's agent with a tool of the user's own (``Greet``, from the project's operators).
GREETER = """
agent greeter {
  model = "gpt-4o"
  tool greet : Greet {
    description = "Greet a person by name"
    input { name = tool_args.name }
  }
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's application (settings, examples) in a temporary folder."""
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path
