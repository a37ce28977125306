"""The run store from the command line: every run recorded, threads continued, runs listed,
shown, resumed and cancelled, the store migrated, pruned and checked."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

from bloge.store import RunStatus, StoreWriter, open_store, ops
from bloge.store.sql.schema import VERSION
from tests.cli.conftest import bloge

QUESTION = "How do I reset my password?"


def recorded(stderr: str) -> tuple[str, str]:
    found = re.search(r"run (\w+) on thread (\w+)", stderr)
    assert found is not None, stderr
    return found[1], found[2]


def test_every_run_is_recorded_and_listed(app: Path) -> None:
    run = bloge("run", "customerSupport", QUESTION, cwd=app)
    run_id, _ = recorded(run.stderr)
    listed = bloge("runs", "list", cwd=app)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"{run_id}  succeeded")


def test_runs_show_prints_the_answer_and_the_timeline(app: Path) -> None:
    run_id, _ = recorded(bloge("run", "customerSupport", QUESTION, cwd=app).stderr)
    shown = bloge("runs", "show", run_id[:8], cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert "answer KB-RESET-001" in shown.stdout
    assert f"execution {run_id} · customerSupport · 7 events" in shown.stdout
    assert "exit stop after 2 turns" in shown.stdout.splitlines()[-1]


def test_a_new_thread_is_continued_by_its_id(app: Path) -> None:
    first = bloge("run", "customerSupport", QUESTION, "--thread", "new", cwd=app)
    _, thread_id = recorded(first.stderr)
    assert f"continue it with --thread {thread_id}" in first.stderr
    second = bloge("run", "customerSupport", "And where do I confirm it?", "--thread",
                   thread_id, cwd=app)
    assert second.returncode == 0, second.stderr
    shown = bloge("threads", "show", thread_id, "--json", cwd=app)
    users = [m["content"] for m in json.loads(shown.stdout)["messages"] if m["role"] == "user"]
    assert users == [QUESTION, "And where do I confirm it?"]


def test_threads_show_takes_a_prefix_of_the_id_like_runs_show(app: Path) -> None:
    _, thread_id = recorded(bloge("run", "customerSupport", QUESTION, "--thread", "new",
                                  cwd=app).stderr)
    shown = bloge("threads", "show", thread_id[:8], cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"thread {thread_id} · 5 messages")


def test_a_run_out_of_turns_resumes_by_its_id_with_more_turns(app: Path) -> None:
    failed = bloge("run", "customerSupport", QUESTION, "--max-turns", "1", "--json", cwd=app)
    assert failed.returncode == 1
    document = json.loads(failed.stdout)
    assert document["resume_run_command"] == (
        f"bloge runs resume {document['run_id']} --max-turns 2")
    resumed = bloge("runs", "resume", document["run_id"], "--max-turns", "2", cwd=app)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout
    status = json.loads(bloge("runs", "list", "--json", cwd=app).stdout)[0]["status"]
    assert status == "succeeded"


def test_a_checkpoint_file_of_a_recorded_run_continues_that_run_once(app: Path) -> None:
    failed = bloge("run", "customerSupport", QUESTION, "--max-turns", "1", "--json", cwd=app)
    document = json.loads(failed.stdout)
    assert json.loads((app / document["checkpoint_file"]).read_text())["run_id"] == (
        document["run_id"])
    resumed = bloge(*document["resume_command"].split()[1:], cwd=app)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout
    assert recorded(resumed.stderr)[0] == document["run_id"]
    (run,) = json.loads(bloge("runs", "list", "--json", cwd=app).stdout)
    assert (run["id"], run["status"]) == (document["run_id"], "succeeded")
    again = bloge(*document["resume_command"].split()[1:], cwd=app)
    assert again.returncode == 2
    assert f"run {document['run_id']!r} already succeeded" in again.stderr


def test_cancelling_a_finished_run_says_how_it_ended(app: Path) -> None:
    run_id, _ = recorded(bloge("run", "customerSupport", QUESTION, cwd=app).stderr)
    cancelled = bloge("runs", "cancel", run_id, cwd=app)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.strip() == f"run {run_id}: succeeded"


def test_an_unknown_run_is_a_usage_error_naming_it(app: Path) -> None:
    shown = bloge("runs", "show", "nosuchrun", cwd=app)
    assert shown.returncode == 2
    assert "no run 'nosuchrun'" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_store_migrate_and_prune(app: Path) -> None:
    migrated = bloge("store", "migrate", cwd=app)
    assert migrated.returncode == 0, migrated.stderr
    assert f"schema version {VERSION}" in migrated.stdout
    bloge("run", "customerSupport", QUESTION, cwd=app)
    pruned = bloge("store", "prune", "--older-than", "0s", cwd=app)
    assert pruned.returncode == 0, pruned.stderr
    assert "deleted 1 runs and 1 threads" in pruned.stdout
    assert bloge("store", "prune", "--older-than", "soon", cwd=app).returncode == 2


def test_prune_refuses_an_age_without_a_unit_and_deletes_nothing(app: Path) -> None:
    assert bloge("run", "customerSupport", QUESTION, cwd=app).returncode == 0
    refused = bloge("store", "prune", "--older-than", "30", cwd=app)
    assert refused.returncode == 2
    assert ("--older-than '30' has no unit; write 30d (days), 30h, 30m or 30s"
            in refused.stderr)
    assert len(json.loads(bloge("runs", "list", "--json", cwd=app).stdout)) == 1


def test_a_store_file_that_is_not_a_database_is_named_without_a_traceback(app: Path) -> None:
    (app / "var").mkdir()
    (app / "var" / "bloge.db").write_text("my notes, not a database\n" * 200)
    run = bloge("run", "customerSupport", QUESTION, cwd=app)
    assert run.returncode == 2
    assert "run store sqlite:///var/bloge.db" in run.stderr
    assert "not a SQLite database" in run.stderr
    assert "Traceback" not in run.stderr


def test_with_the_store_off_runs_are_not_recorded(app: Path) -> None:
    run = bloge("run", "customerSupport", QUESTION, cwd=app, env={"BLOGE_STORE__ENABLED": "false"})
    assert run.returncode == 0, run.stderr
    assert "on thread" not in run.stderr
    assert not (app / "var" / "bloge.db").exists()
    listed = bloge("runs", "list", cwd=app, env={"BLOGE_STORE__ENABLED": "false"})
    assert listed.returncode == 2
    assert "the run store is off" in listed.stderr


def test_a_memory_store_offers_no_thread_or_run_to_come_back_to(app: Path) -> None:
    memory = {"BLOGE_STORE__URL": "memory://"}
    ran = bloge("run", "customerSupport", QUESTION, "--thread", "new", cwd=app, env=memory)
    assert ran.returncode == 0, ran.stderr
    assert "(a memory:// store: they end with this command)" in ran.stderr
    assert "continue it with" not in ran.stderr
    failed = bloge("run", "customerSupport", QUESTION, "--max-turns", "1", cwd=app, env=memory)
    assert failed.returncode == 1
    assert "bloge runs resume" not in failed.stderr
    assert "checkpoint saved to" in failed.stderr  # the file still resumes it


def test_store_check_finds_and_repair_mends_a_thread_that_refers_to_missing_messages(
        app: Path) -> None:
    run_id, thread_id = recorded(bloge("run", "customerSupport", QUESTION, "--thread", "new",
                                       cwd=app).stderr)

    async def break_thread() -> None:
        # What a run's end wrote after its last batch was refused, before the fix.
        async with open_store(f"sqlite:///{app / 'var' / 'bloge.db'}") as store:
            missing = (await store.get_thread(thread_id)).message_count + 1
            view = ((1, missing),)
            await StoreWriter(store).write([ops.FinishRun(run_id, thread_id, RunStatus.FAILED, "error", 2,
                                             {}, None, {"type": "StoreError", "message": "x"},
                                             view, time.time())])

    asyncio.run(break_thread())
    assert bloge("run", "customerSupport", "Again", "--thread", thread_id,
                 cwd=app).returncode == 2
    found = bloge("store", "check", cwd=app)
    assert found.returncode == 1, found.stderr
    assert f"thread {thread_id}'s view refers to messages" in found.stdout
    assert "bloge store check --repair mends them" in found.stderr
    mended = bloge("store", "check", "--repair", cwd=app)
    assert mended.returncode == 0, mended.stderr
    assert mended.stdout.rstrip().endswith(": mended")
    assert "every thread is whole" in bloge("store", "check", cwd=app).stdout
    again = bloge("run", "customerSupport", "Again", "--thread", thread_id, cwd=app)
    assert again.returncode == 0, again.stderr


def test_a_run_out_of_budget_resumes_by_its_id_with_a_raised_limit(app: Path) -> None:
    failed = bloge("run", "customerSupport", QUESTION, "--budget", "model_calls=1", "--json",
                   cwd=app)
    assert failed.returncode == 1, failed.stderr
    document = json.loads(failed.stdout)
    assert document["exit_reason"] == "budget"
    assert document["error"]["type"] == "BudgetExceededError"
    assert "model_calls budget of 1 would be exceeded" in document["error"]["message"]
    assert document["resume_run_command"] == (
        f"bloge runs resume {document['run_id']} --budget model_calls=3")
    resumed = bloge("runs", "resume", document["run_id"], "--budget", "model_calls=2", cwd=app)
    assert resumed.returncode == 0, resumed.stderr
    assert "KB-RESET-001" in resumed.stdout
    shown = bloge("runs", "show", document["run_id"], "--json", cwd=app)
    usage = json.loads(shown.stdout)["usage"]
    assert usage["llm_calls"] == 2
    assert usage["tool_calls"] >= 1


def test_a_budget_limit_that_is_not_one_is_refused_with_the_limits(app: Path) -> None:
    failed = bloge("run", "customerSupport", QUESTION, "--budget", "dollars=1", cwd=app)
    assert failed.returncode == 2
    assert "unknown budget limit 'dollars'" in failed.stderr


def test_a_budget_option_that_is_not_a_limit_is_refused_in_the_options_words(app: Path) -> None:
    failed = bloge("run", "customerSupport", QUESTION, "--budget", "usd", cwd=app)
    assert failed.returncode == 2
    assert ("error: --budget takes <limit>=<value> or thread.<limit>=<value> (e.g. usd=1.00), "
            "got 'usd'") in failed.stderr


def test_usage_sums_the_model_calls_by_agent_and_by_model(app: Path) -> None:
    bloge("run", "customerSupport", QUESTION, cwd=app)
    bloge("run", "customerSupport", QUESTION, cwd=app)
    by_agent = bloge("usage", "--json", cwd=app)
    assert by_agent.returncode == 0, by_agent.stderr
    (group,) = json.loads(by_agent.stdout)["groups"]
    assert (group["group"], group["model_calls"]) == ("customerSupport", 4)
    shown = bloge("usage", "--by", "model", "--since", "7d", cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0].split()[:2] == ["model", "calls"]
    assert shown.stdout.splitlines()[-1].split()[:2] == ["total", "4"]


def test_usage_refuses_an_unknown_grouping(app: Path) -> None:
    refused = bloge("usage", "--by", "colour", cwd=app)
    assert refused.returncode == 2
    assert "--by takes agent, key, model, thread" in refused.stderr


def test_a_usd_limit_on_a_model_without_a_price_is_refused_before_the_run_starts(
        app: Path) -> None:
    (app / "examples" / "support" / "house.bloge").write_text(
        'agent houseSupport {\n  model = "house-model"\n}\n')
    refused = bloge("run", "houseSupport", QUESTION, "--budget", "thread.usd=5", cwd=app)
    assert refused.returncode == 2
    assert ("error: --budget thread.usd=5: no price for model 'house-model', so a usd budget "
            "cannot be kept") in refused.stderr
    assert json.loads(bloge("runs", "list", "--json", cwd=app).stdout) == []


def stopped_in_billing_then_resumed(app: Path, billing_limit: str) -> list[dict[str, Any]]:
    """The triage example's run, billingAgent's ``max_turns = 6`` line replaced by
    ``billing_limit``, which stops it after its handoff: its ``--json`` document, once for
    each way to resume it (by the run's id, by its file), each resumed with the command it
    suggests, which must answer."""
    triage = app / "examples" / "triage" / "triage.bloge"
    triage.write_text(triage.read_text().replace("max_turns = 6\n\n  tool lookupInvoice",
                                                 f"{billing_limit}\n\n  tool lookupInvoice"))
    documents = []
    for resume in ("resume_run_command", "resume_command"):
        failed = bloge("run", "triage", "I was charged twice for order 1234, please refund me",
                       "--json", cwd=app)
        assert failed.returncode == 1, failed.stderr
        document = json.loads(failed.stdout)
        resumed = bloge(*document[resume].split()[1:], cwd=app)
        assert resumed.returncode == 0, resumed.stderr
        assert "refunded the duplicate charge" in resumed.stdout
        documents.append({**document, "resume": document[resume]})
    return documents


def test_a_run_out_of_turns_after_its_handoff_resumes_with_the_suggested_cap(app: Path) -> None:
    # billingAgent's own cap: its turn after the handoff, then it needs more.
    for document in stopped_in_billing_then_resumed(app, "max_turns = 2"):
        assert "agent 'billingAgent' needed another model call" in document["error"]["message"]


def test_a_run_stopped_by_a_budget_after_its_handoff_resumes_with_the_suggested_limit(
        app: Path) -> None:
    # billingAgent's own budget: room for its first model call, not for the next.
    for document in stopped_in_billing_then_resumed(
            app, "max_turns = 6\n  budget { model_calls = 2 }"):
        assert document["exit_reason"] == "budget", document
        assert "--budget model_calls=" in document["resume"]
