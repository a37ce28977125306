"""``bloge eval record|run|compare`` end to end, through the console script, on the examples."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.cli.conftest import bloge

FAILING = """\
agent: customerSupport
cases:
  - name: reset
    input: How do I reset my password?
    expect:
      - contains: KB-RESET-001
  - name: wrong
    input: How do I reset my password?
    expect:
      - contains: KB-NOPE
      - tools: [createTicket]
"""


def test_the_support_dataset_runs_with_json_and_junit_results(app: Path) -> None:
    done = bloge("eval", "run", "examples/support/evals/support.yaml", "--json", "--junit",
                 "junit.xml", cwd=app)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert (results["pass_rate"], results["failed"], results["missed"]) == (1.0, 0, [])
    assert len(results["cases"]) >= 15
    written = ET.parse(app / "junit.xml")  # noqa: S314 -- the file the command just wrote
    suite = written.getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(len(results["cases"])), "0")
    # Each case ran as a recorded run of the project's store.
    runs = bloge("runs", "list", "--limit", "100", "--evals", cwd=app)
    assert results["cases"][0]["runs"][0]["run_id"] in runs.stdout


def test_runs_and_threads_lists_leave_the_runs_of_evals_out_unless_asked(app: Path) -> None:
    assert bloge("run", "customerSupport", "How do I reset my password?",
                 cwd=app).returncode == 0
    (app / "failing.yaml").write_text(FAILING, encoding="utf-8")
    graded = json.loads(bloge("eval", "run", "failing.yaml", "--json", cwd=app).stdout)
    eval_runs = {run["run_id"] for case in graded["cases"] for run in case["runs"]}
    listed = json.loads(bloge("runs", "list", "--json", cwd=app).stdout)
    assert len(listed) == 1
    assert listed[0]["id"] not in eval_runs
    every = json.loads(bloge("runs", "list", "--json", "--evals", cwd=app).stdout)
    assert {run["id"] for run in every} == {listed[0]["id"], *eval_runs}
    threads = json.loads(bloge("threads", "list", "--json", cwd=app).stdout)
    assert [thread["id"] for thread in threads] == [listed[0]["thread_id"]]
    assert len(json.loads(bloge("threads", "list", "--json", "--evals", cwd=app).stdout)) == 3


def test_a_failed_case_is_explained_and_the_command_exits_1(app: Path) -> None:
    (app / "failing.yaml").write_text(FAILING, encoding="utf-8")
    done = bloge("eval", "run", "failing.yaml", cwd=app)
    assert done.returncode == 1
    assert "FAIL wrong: How do I reset my password?" in done.stdout
    assert "contains: the answer does not contain 'KB-NOPE'" in done.stdout
    assert "tools: expected the calls createTicket; the run made searchKnowledgeBase(" \
        in done.stdout
    assert "threshold missed: pass rate 50.0% < 100.0%" in done.stdout


def test_a_threshold_the_results_reach_exits_0(app: Path) -> None:
    (app / "failing.yaml").write_text(FAILING, encoding="utf-8")
    done = bloge("eval", "run", "failing.yaml", "--min-pass-rate", "0.5", cwd=app)
    assert done.returncode == 0, done.stdout


def test_a_bad_dataset_is_named_with_its_line_and_key(app: Path) -> None:
    (app / "bad.yaml").write_text("cases:\n  - input: hi\n    expect:\n      - contain: x\n",
                                  encoding="utf-8")
    done = bloge("eval", "run", "bad.yaml", cwd=app)
    assert done.returncode == 2
    assert done.stderr.startswith("error: bad.yaml:4: cases[0].expect[0].contain: unknown "
                                  "check 'contain'; did you mean 'contains'?")


def test_recorded_runs_replay_and_two_results_compare(app: Path) -> None:
    for question in ("How do I reset my password?",
                     "I need a refund for order 1234, please open a ticket"):
        assert bloge("run", "customerSupport", question, cwd=app).returncode == 0
    recorded = bloge("eval", "record", "--since", "1d", "--agent", "customerSupport", "-o",
                     "recorded.yaml", cwd=app)
    assert recorded.returncode == 0, recorded.stderr
    assert "wrote 2 case(s) to recorded.yaml" in recorded.stderr
    text = (app / "recorded.yaml").read_text(encoding="utf-8")
    assert "tool: createTicket" in text
    assert "reference:" in text
    before = bloge("eval", "run", "recorded.yaml", "--json", cwd=app)
    after = bloge("eval", "run", "recorded.yaml", "--json", "--model", "gpt-4o-mini", cwd=app)
    assert (before.returncode, after.returncode) == (0, 0), before.stdout + after.stdout
    (app / "before.json").write_text(before.stdout, encoding="utf-8")
    (app / "after.json").write_text(after.stdout, encoding="utf-8")
    compared = bloge("eval", "compare", "before.json", "after.json", cwd=app)
    assert compared.returncode == 0, compared.stderr
    assert "gpt-4o (" in compared.stdout
    assert "gpt-4o-mini (" in compared.stdout
    assert compared.stdout.count(" same ") == 2
    assert "pass rate 100.0% → 100.0%" in compared.stdout


JUDGED = """\
agent: customerSupport
cases:
  - name: contains
    input: What is the weather?
    expect:
      - contains: Sunny
  - name: judged
    input: What is the weather?
    expect:
      - judge: The answer says the weather is sunny.
"""


def test_a_judge_that_fails_fails_its_check_and_every_result_is_written(app: Path) -> None:
    (app / "judged.yaml").write_text(JUDGED, encoding="utf-8")
    with socket.socket() as unused:  # a port nobody listens on: every model call fails
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    done = bloge("eval", "run", "judged.yaml", "--json", "--junit", "junit.xml", cwd=app,
                 env={"BLOGE_LLM__RETRY__MAX_ATTEMPTS": "1", "BLOGE_LLM__PROVIDER": "openai",
                      "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "x"})
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)
    assert [case["name"] for case in results["cases"]] == ["contains", "judged"]
    (verdict,) = results["cases"][1]["runs"][0]["verdicts"]
    assert verdict["check"] == "judge"
    assert verdict["reason"].startswith("the judge (gpt-4o) failed: openai")
    assert (app / "junit.xml").exists()


EVALUATED = """\
agent: customerSupport
cases:
  - name: polite
    input: How do I reset my password?
    expect:
      - evaluator: polite
        args: {word: password}
  - name: exploding
    input: How do I reset my password?
    expect:
      - evaluator: exploding
"""

EVALUATORS = """\
def polite(check):
    word = check["args"]["word"]
    return word in (check["answer"] or "").lower(), f"no {word!r}"


def exploding(check):
    raise RuntimeError("evaluator exploded token=sk-secret-123")
"""


def test_evaluators_are_operators_of_the_settings_and_one_that_raises_fails_its_check(
        app: Path) -> None:
    (app / "myops.py").write_text(EVALUATORS, encoding="utf-8")
    settings = app / "settings.yaml"
    settings.write_text(settings.read_text(encoding="utf-8").replace(
        "  operators:\n", '  operators:\n    polite: "myops:polite"\n'
                          '    exploding: "myops:exploding"\n', 1), encoding="utf-8")
    (app / "evaluated.yaml").write_text(EVALUATED, encoding="utf-8")
    done = bloge("eval", "run", "evaluated.yaml", cwd=app)
    assert done.returncode == 1, done.stderr
    assert "FAIL polite" not in done.stdout
    assert ("exploding: evaluator 'exploding' failed on case 'exploding': RuntimeError: "
            "evaluator exploded token=****") in done.stdout
    assert "sk-secret-123" not in done.stdout + done.stderr


def test_an_output_file_in_a_missing_folder_is_refused_before_any_case_runs(app: Path) -> None:
    missing = app / "nonexistent" / "j.xml"
    done = bloge("eval", "run", "examples/support/evals/support.yaml", "--json", "--junit",
                 str(missing), cwd=app)
    assert done.returncode == 2
    assert done.stderr == (f"error: --junit {missing}: the folder {missing.parent} does not "
                           "exist\n")
    assert bloge("runs", "list", "--json", "--evals", cwd=app).stdout.strip() == "[]"
    recorded = bloge("eval", "record", "--since", "1d", "-o", "nonexistent/r.yaml", cwd=app)
    assert recorded.returncode == 2
    assert recorded.stderr == ("error: --output nonexistent/r.yaml: the folder nonexistent "
                               "does not exist\n")


def test_results_of_two_datasets_are_not_compared(app: Path) -> None:
    (app / "failing.yaml").write_text(FAILING, encoding="utf-8")
    (app / "failing.json").write_text(bloge("eval", "run", "failing.yaml", "--json",
                                            cwd=app).stdout, encoding="utf-8")
    (app / "support.json").write_text(bloge("eval", "run", "examples/support/evals/support.yaml",
                                            "--json", cwd=app).stdout, encoding="utf-8")
    done = bloge("eval", "compare", "failing.json", "support.json", cwd=app)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: the results are of two datasets, 'failing' and 'support': "
                           "compare two results of one dataset\n")
