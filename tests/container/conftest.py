from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the repository's application (settings, examples) in a temporary folder."""
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path
