"""Typed agents on the command line: ``bloge check`` locates schema mistakes, ``bloge run
--json`` prints the validated value (offline, no key), and ``output = Name`` names a type of
``bloge.output.types``."""

from __future__ import annotations

import json
from pathlib import Path

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
