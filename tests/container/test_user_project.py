"""A user's own project: its config.py, container.py and operators meet none of bloge's names."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bloge_container import ConfigurationError, create_container
from tests.container.conftest import GREETER

BLOGE = Path(sys.executable).with_name("bloge")

@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A project with the module names users pick most: config.py, container.py."""
    (tmp_path / "config.py").write_text('GREETING = "Hello from the user\'s config"\n')
    (tmp_path / "container.py").write_text('NAME = "the user\'s container"\n')
    (tmp_path / "operators.py").write_text(textwrap.dedent("""
        from config import GREETING
        from container import NAME

        def greet(input):
            return f"{GREETING}, {input['name']} ({NAME})"
    """))
    (tmp_path / "greeter.bloge").write_text(GREETER)
    (tmp_path / "settings.yaml").write_text(textwrap.dedent("""
        bloge:
          agents: {dsl-locations: ["*.bloge"]}
          operators: {Greet: "operators:greet"}
    """))
    return tmp_path


def bloge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BLOGE_")}
    environment["PYTHONPATH"] = "."
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, check=False, timeout=60)


def test_the_cli_starts_with_the_users_config_and_container_on_the_path(
        user_project: Path) -> None:
    result = bloge("--help", cwd=user_project)
    assert result.returncode == 0, result.stderr
    assert "run" in result.stdout


def test_operators_import_the_users_own_config_module(user_project: Path) -> None:
    result = bloge("run", "greeter", "Please greet Ada", cwd=user_project)
    assert result.returncode == 0, result.stderr
    assert "Hello from the user's config" in result.stdout
    assert "the user's container" in result.stdout


def test_a_project_module_shadowed_by_an_installed_package_is_a_clear_error(
        tmp_path: Path) -> None:
    (tmp_path / "json.py").write_text("def greet(input):\n    return 'never imported'\n")
    (tmp_path / "settings.yaml").write_text(
        'bloge:\n  agents: {dsl-locations: []}\n  operators: {Greet: "json:greet"}\n')
    container = create_container(project_dir=tmp_path, settings_file=tmp_path / "settings.yaml")
    with pytest.raises(ConfigurationError, match=r"bloge\.operators\.Greet: module 'json' is "
                       r"the project's json\.py, but the name is taken by an installed package"):
        container.operator_registry()


def test_a_dsl_location_that_is_a_folder_is_an_error_saying_which_glob_to_write(
        user_project: Path) -> None:
    (user_project / "agents").mkdir()
    (user_project / "greeter.bloge").rename(user_project / "agents" / "greeter.bloge")
    (user_project / "settings.yaml").write_text(
        'bloge:\n  agents: {dsl-locations: ["agents"]}\n  operators: {Greet: "operators:greet"}\n')
    result = bloge("run", "greeter", "Please greet Ada", cwd=user_project)
    assert result.returncode == 2
    assert ("bloge.agents.dsl-locations entry 'agents' is a folder; write 'agents/*.bloge' "
            "(or 'agents/**/*.bloge' with its subfolders)") in result.stderr
    assert "Traceback" not in result.stderr
