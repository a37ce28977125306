"""The offline model is production code: it never leans on the test doubles."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_architecture import ROOT, imports_of, python_files


@pytest.mark.parametrize("path", python_files("bloge/llm/offline"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_offline_model_never_imports_the_test_doubles(path: Path) -> None:
    assert "bloge.llm.testing" not in imports_of(path)
