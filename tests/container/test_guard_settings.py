"""``bloge.guards.fail-open``: the container's agents' guards without an ``on_error`` of their
own count a raising guard as passed, and those with one keep it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bloge_config import load_settings
from bloge_container import create_container
from bloge_container.application import close_container

AGENT = """
agent guarded {
  model = "gpt-4o"
  guard output broken : Broken { }
  guard output strict : Broken { on_error = "trip" }
}
"""
OPERATORS = "def broken(check):\n    raise RuntimeError('the classifier is down')\n"


@pytest.mark.parametrize(("fail_open", "expected"), [("true", ["pass", "trip"]),
                                                     ("false", ["trip", "trip"])])
def test_fail_open_applies_to_guards_that_do_not_choose(tmp_path: Path, fail_open: str,
                                                        expected: list[str]) -> None:
    (tmp_path / "guarded.bloge").write_text(AGENT, encoding="utf-8")
    (tmp_path / "guard_ops.py").write_text(OPERATORS, encoding="utf-8")
    environ = {"BLOGE_AGENTS__DSL_LOCATIONS": '["*.bloge"]', "BLOGE_STORE__ENABLED": "false",
               "BLOGE_OPERATORS": '{"Broken": "guard_ops:broken"}',
               "BLOGE_GUARDS__FAIL_OPEN": fail_open}
    container = create_container(load_settings(base_dir=tmp_path, environ=environ),
                                 project_dir=tmp_path)
    try:
        definition = container.agents()["guarded"].definition
        assert [g.on_error or "trip" for g in definition.guards] == expected
    finally:
        asyncio.run(close_container(container))
