"""Which settings file is read, and which folder is the project: a relative ``-c`` path is
taken from the working directory, and the project is the settings file's folder however the
file was named (``settings_file``, ``-c`` or ``BLOGE_SETTINGS_FILE``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bloge_container import create_container
from tests.container.conftest import GREETER

BLOGE = Path(sys.executable).with_name("bloge")

@pytest.fixture
def myapp(tmp_path: Path) -> Path:
    """A project in tmp_path/myapp: settings, an operators module and a DSL file of its own."""
    project = tmp_path / "myapp"
    (project / "agents").mkdir(parents=True)
    (project / "agents" / "greeter.bloge").write_text(GREETER, encoding="utf-8")
    (project / "myapp_operators.py").write_text(
        "def greet(input):\n    return f\"Hello from myapp, {input['name']}\"\n", encoding="utf-8")
    (project / "settings.yaml").write_text(textwrap.dedent("""
        bloge:
          agents: {dsl-locations: ["agents/*.bloge"]}
          operators: {Greet: "myapp_operators:greet"}
    """), encoding="utf-8")
    return project


def bloge(*args: str, cwd: Path, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BLOGE_")}
    environment.update(env or {})
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, check=False, timeout=60)


def test_a_relative_settings_file_is_taken_from_the_working_directory(
        myapp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(myapp.parent)
    monkeypatch.delenv("BLOGE_SETTINGS_FILE", raising=False)
    container = create_container(settings_file="myapp/settings.yaml")
    assert container.project().path == myapp
    assert container.settings().operators == {"Greet": "myapp_operators:greet"}


def test_the_project_is_the_folder_of_the_file_bloge_settings_file_names(
        myapp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(myapp.parent)
    monkeypatch.setenv("BLOGE_SETTINGS_FILE", "myapp/settings.yaml")
    container = create_container()
    assert container.project().path == myapp
    assert container.settings().operators == {"Greet": "myapp_operators:greet"}


def test_a_relative_settings_file_is_taken_from_an_explicit_project_dir(myapp: Path) -> None:
    container = create_container(project_dir=myapp, settings_file="settings.yaml")
    assert container.project().path == myapp
    assert container.settings().agents.dsl_locations == ("agents/*.bloge",)


def test_run_with_a_relative_config_finds_the_projects_operators_and_agents(myapp: Path) -> None:
    result = bloge("run", "greeter", "Please greet Ada", "-c", "myapp/settings.yaml",
                   cwd=myapp.parent)
    assert result.returncode == 0, result.stderr
    assert "Hello from myapp" in result.stdout


def test_run_with_bloge_settings_file_finds_the_projects_operators_and_agents(
        myapp: Path) -> None:
    result = bloge("run", "greeter", "Please greet Ada", cwd=myapp.parent,
                   env={"BLOGE_SETTINGS_FILE": "myapp/settings.yaml"})
    assert result.returncode == 0, result.stderr
    assert "Hello from myapp" in result.stdout


def test_without_a_settings_file_the_project_is_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BLOGE_SETTINGS_FILE", raising=False)
    container = create_container()
    assert container.project().path == tmp_path
    assert container.settings().operators == {}


def test_an_operator_module_that_raises_on_import_stops_bloge_check_with_exit_2(
        myapp: Path) -> None:
    (myapp / "myapp_operators.py").write_text(
        "raise RuntimeError('cannot reach the service, token=sk-live-SHOULDNOTLEAK')\n")
    result = bloge("check", cwd=myapp)
    assert result.returncode == 2
    assert result.stderr == (
        "error: bloge.operators.Greet: cannot import module 'myapp_operators' of "
        "'myapp_operators:greet' (RuntimeError at myapp_operators.py:1: cannot reach the "
        "service, token=****)\n")
