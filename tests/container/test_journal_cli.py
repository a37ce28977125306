"""The journal from the command line: the README's one-setting recipe in a project with no
settings file, ``--json`` output next to it, and a journal that cannot be opened."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BLOGE = Path(sys.executable).with_name("bloge")
AGENT = 'agent hello {\n  model = "gpt-4o"\n  max_turns = 2\n}\n'
JOURNAL_ON = {"BLOGE_EVENT_JOURNAL__ENABLED": "true"}


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A project holding one agent file, and no settings.yaml."""
    (tmp_path / "hello.bloge").write_text(AGENT, encoding="utf-8")
    return tmp_path


def bloge(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BLOGE_")}
    environment.update(env or {})
    return subprocess.run([str(BLOGE), *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, check=False, timeout=60)


def test_the_one_setting_recipe_works_in_a_project_without_settings(fresh: Path) -> None:
    run = bloge("run", "hello.bloge", "Say hi", cwd=fresh, env=JOURNAL_ON)
    assert run.returncode == 0, run.stderr
    hint = re.search(r"bloge journal show (\w+)", run.stderr)
    assert hint is not None, run.stderr
    show = bloge("journal", "show", hint[1], cwd=fresh)
    assert show.returncode == 0, show.stderr
    assert show.stdout.startswith("execution ")
    assert "exit stop after 1 turn" in show.stdout.splitlines()[-1]
    assert (fresh / "var" / "bloge.db").exists()  # the run store holds the journal


def test_the_recipe_with_the_file_sink_writes_the_journal_file(fresh: Path) -> None:
    run = bloge("run", "hello.bloge", "Say hi", cwd=fresh,
                env={**JOURNAL_ON, "BLOGE_EVENT_JOURNAL__SINK": "file"})
    hint = re.search(r"bloge journal show (\w+)", run.stderr)
    assert hint is not None, run.stderr
    show = bloge("journal", "show", hint[1], cwd=fresh,
                 env={"BLOGE_EVENT_JOURNAL__SINK": "file"})
    assert show.returncode == 0, show.stderr
    assert "exit stop after 1 turn" in show.stdout.splitlines()[-1]
    assert (fresh / "var" / "journal.jsonl").exists()


def test_json_output_stays_parseable_with_the_journal_on(fresh: Path) -> None:
    run = bloge("run", "hello.bloge", "Say hi", "--json", cwd=fresh, env=JOURNAL_ON)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["exit_reason"] == "stop"


def test_an_unopenable_journal_gives_one_warning_and_the_run_succeeds(fresh: Path) -> None:
    env = {**JOURNAL_ON, "BLOGE_EVENT_JOURNAL__SINK": "file",
           "BLOGE_EVENT_JOURNAL__PATH": "hello.bloge/journal.jsonl"}
    run = bloge("run", "hello.bloge", "Say hi", cwd=fresh, env=env)
    assert run.returncode == 0, run.stderr
    assert "offline model" in run.stdout
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning: event journal:")]
    assert len(warnings) == 1, run.stderr
    assert "cannot open the event journal" in warnings[0]
    assert "Traceback" not in run.stderr
