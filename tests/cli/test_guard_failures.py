"""A run whose input its guard refused, as ``bloge run`` and ``bloge runs resume`` tell it: the
input was kept nowhere, so nothing is left to resume."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.conftest import bloge, write_project

AGENT = """
agent guarded {
  model = "gpt-4o"
  guard input pii : PiiGuard { }
}
"""
CARD = "my card is 4111 1111 1111 1111"


def test_a_run_whose_input_was_refused_prints_no_resume_command(tmp_path: Path) -> None:
    project = write_project(tmp_path, agents=AGENT, operators={}, source="")
    result = bloge("run", "guarded", CARD, cwd=project)
    assert result.returncode == 1, result.stderr
    assert "stopped by its input guard 'pii'" in result.stderr
    assert ("its input was refused and kept nowhere, so there is nothing to resume: send "
            "another input") in result.stderr
    assert "resume" not in result.stderr.replace("nothing to resume", "")
    assert not (project / "var" / "checkpoints").exists()

    document = json.loads(bloge("run", "guarded", CARD, "--thread", "new", "--json",
                                cwd=project).stdout)
    assert (document["exit_reason"], document["checkpoint_file"], document["resume_command"],
            document["resume_run_command"]) == ("guardrail", None, None, None)
    went_on = bloge("run", "guarded", "hello", "--thread", document["thread_id"], cwd=project)
    assert went_on.returncode == 0, went_on.stderr


def test_resuming_a_run_whose_input_was_refused_is_refused(tmp_path: Path) -> None:
    project = write_project(tmp_path, agents=AGENT, operators={}, source="")
    run_id = json.loads(bloge("run", "guarded", CARD, "--json", cwd=project).stdout)["run_id"]
    resumed = bloge("runs", "resume", run_id, cwd=project)
    assert resumed.returncode == 2
    assert re.search(rf"run '{run_id}' was stopped by its input guard 'pii': its input was "
                     r"refused and kept nowhere, so nothing is left to resume; send another "
                     r"input to thread '\w+' in a new run", resumed.stderr), resumed.stderr
