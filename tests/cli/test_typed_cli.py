"""Typed agents on the command line: ``bloge check`` locates schema mistakes, ``bloge run
--json`` prints the validated value (offline, no key), and ``output = Name`` names a type of
``bloge.output.types``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import bloge

TRIAGE = """agent triage {
  model = "gpt-4o"
  output { title: string, priority: "low" | "normal" | "high", tags: list<string>? }
}
"""

MODELS = """from pydantic import BaseModel


class Ticket(BaseModel):
    title: str
    urgent: bool
"""


def project(tmp_path: Path, agent: str, settings: str = "") -> Path:
    (tmp_path / "settings.yaml").write_text(
        "bloge:\n  agents: {dsl-locations: ['*.bloge']}\n  store: {url: 'memory://'}\n"
        + settings, encoding="utf-8")
    (tmp_path / "triage.bloge").write_text(agent, encoding="utf-8")
    return tmp_path


def test_check_reports_a_schema_mistake_at_its_line_and_column(tmp_path: Path) -> None:
    project(tmp_path, TRIAGE.replace("list<string>", "lst<string>"))
    result = bloge("check", "triage.bloge", cwd=tmp_path)
    assert result.returncode != 0
    assert "triage.bloge:3:70: unknown type 'lst'; did you mean 'list'?" in result.stderr


def test_run_json_prints_the_offline_models_typed_value(tmp_path: Path) -> None:
    project(tmp_path, TRIAGE)
    result = bloge("run", "triage", "The printer is broken, high priority", "--json",
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["output"] == {
        "title": "The printer is broken, high priority", "priority": "high", "tags": None}


def test_output_names_a_type_from_the_settings(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODELS, encoding="utf-8")
    project(tmp_path, 'agent triage {\n  model = "m"\n  output = Ticket\n}\n',
            "  output: {types: {Ticket: 'models:Ticket'}}\n")
    result = bloge("run", "triage", "Printer jam", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["output"] == {"title": "Printer jam", "urgent": False}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads it from Python 3.12")
def test_a_typing_typed_dict_output_type_is_a_settings_error_saying_which_to_use(
        tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(
        "from typing import TypedDict\n\n\nclass Draft(TypedDict):\n    title: str\n",
        encoding="utf-8")
    project(tmp_path, TRIAGE, "  output: {types: {Draft: 'models:Draft'}}\n")
    result = bloge("run", "triage", "Printer jam", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "error: bloge.output.types.Draft: cannot use <class 'models.Draft'> as an output type: "
        "Please use `typing_extensions.TypedDict` instead of `typing.TypedDict` on Python < "
        "3.12.\n")


def test_a_typed_dict_of_typing_extensions_names_an_output_type(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(
        "from typing_extensions import TypedDict\n\n\n"
        "class Draft(TypedDict):\n    title: str\n", encoding="utf-8")
    project(tmp_path, 'agent triage {\n  model = "m"\n  output = Draft\n}\n',
            "  output: {types: {Draft: 'models:Draft'}}\n")
    result = bloge("run", "triage", "Printer jam", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["output"] == {"title": "Printer jam"}
