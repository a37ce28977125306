"""The house rules for tests that a machine can check (STYLE.md, habit 12)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLEEPS = {("asyncio", "sleep"), ("time", "sleep")}


def sleeps_in(path: Path) -> list[str]:
    """Where ``path`` calls ``asyncio.sleep`` or ``time.sleep``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.relative_to(TESTS)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and (node.func.value.id, node.func.attr) in SLEEPS]


def test_no_test_waits_by_sleeping() -> None:
    """Tests wait on events; a sleep ties a test to the scheduler or to the clock."""
    assert [where for path in sorted(TESTS.rglob("*.py")) for where in sleeps_in(path)] == []
