"""A sub-agent on its caller's thread (``thread = "parent"``) on Temporal, as in process: the
child workflow's run has the caller's thread and the caller as its parent; its messages go
on the caller's log tagged with its run id, numbered from the thread's one sequence (three
children at once, and a grandchild, never take one number, nor do the caller's later
messages); the caller's model sees only the call's result, and the thread's next run starts
from the caller's view; the histories replay. On SQLite and PostgreSQL (see
tests/temporal/agents.py's fanner, nested, middler and confider)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge import RunPaused
from bloge.agent.runtime import child_run_id
from bloge.core.context import OperatorContext, Principal
from bloge.store import (
    RunStatus,
    Store,
    StoredMessage,
    guest_runs,
    masked_message,
    open_store,
)
from bloge.temporal import (
    TemporalOptions,
    TemporalRunner,
    agent_worker,
    catalogue,
    served_agents,
)
from bloge_container.cli.threads_cmd import message_line
from tests.processes import said_until
from tests.store.conftest import POSTGRES_DSN, postgres_schema  # noqa: F401 -- a fixture
from tests.temporal import agents
from tests.temporal.conftest import Spawn, StoredAgents, within
from tests.temporal.test_agent_calls import _replays

ALICE = OperatorContext.root(principal=Principal("alice"))


@pytest.fixture(params=["sqlite", "postgresql"])
def thread_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A run store's URL, on each durable backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return f"{POSTGRES_DSN}?schema={request.getfixturevalue('postgres_schema')}"


@pytest.fixture
async def thread_store(thread_store_url: str) -> AsyncIterator[Store]:
    """The run store at ``thread_store_url``."""
    opened = open_store(thread_store_url)
    try:
        yield opened
    finally:
        await opened.aclose()


def _by_run(log: list[StoredMessage]) -> dict[str | None, list[tuple[str, str]]]:
    """Each run's messages on the log (role and text), in order."""
    runs: dict[str | None, list[tuple[str, str]]] = {}
    for message in log:
        runs.setdefault(message.run_id, []).append((message.message.role,
                                                    message.message.content))
    return runs


async def test_three_children_at_once_write_on_their_callers_thread_in_one_sequence(
        client: Client, task_queue: str, tmp_path: Path, thread_store: Store) -> None:
    store = thread_store
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    runner = TemporalRunner(client, task_queue)
    async with agent_worker(client, served, options, store=store):
        output = await runner.run("fanner", "fan x", run_id="fan-1")
        children = [child_run_id(f"fan-1:1:f{n}") or "" for n in (1, 2, 3)]
        for run_id in ("fan-1", *children):
            await _replays(client, run_id, task_queue)
        # The thread's next run starts from the caller's view: none of its children's.
        again = await runner.run("fanner", "read it", thread_id=output.thread_id,
                                 run_id="fan-2")
    assert output.content == ("fanned: found: counted research x1 | found: counted research "
                              "x2 | found: counted research x3")
    caller = await store.get_run("fan-1")
    for run_id in children:
        run = await store.get_run(run_id)
        assert (run.thread_id, run.parent_run_id, run.status) == (
            caller.thread_id, "fan-1", RunStatus.SUCCEEDED)
    log = await store.thread_messages(caller.thread_id)
    # One sequence, no number twice, no gap.
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    runs = _by_run(log)
    assert runs["fan-1"][:2] == [("user", "fan x"), ("assistant", "Asking three.")]
    for n, run_id in enumerate(children, start=1):
        assert runs[run_id] == [("user", f"research x{n}"), ("assistant", ""),
                                ("tool", f"counted research x{n}"),
                                ("assistant", f"found: counted research x{n}")]
    # The caller asked before its children wrote, and answered after them.
    first_child = min(m.seq for m in log if m.run_id in children)
    assert max(m.seq for m in log if m.run_id == "fan-1" and m.seq < first_child) == 2
    assert log[-1].run_id == "fan-2"
    sub_agents = await guest_runs(store, log)
    assert sub_agents == dict.fromkeys(children, "researcher")
    # bloge threads show tags the children's lines, as in process.
    lines = [message_line(masked_message(store.redactor, m), sub_agents) for m in log]
    assert lines[0] == "    1  user      fan x"
    assert lines[1].startswith("    2  assistant Asking three. → research(")
    assert sum(line.endswith(f"[sub-agent researcher, run {children[0]}]")
               for line in lines) == 4
    # The caller's model saw the results only: 6 messages, then the new question.
    assert again.content.endswith(" in 7 messages")
    assert (tmp_path / "count.log").read_text().count("\n") == 3


async def test_a_grandchild_numbers_from_the_same_sequence(
        client: Client, task_queue: str, tmp_path: Path, thread_store: Store) -> None:
    store = thread_store
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options, store=store):
        output = await TemporalRunner(client, task_queue).run(
            "nested", "delegate relay y", run_id="nested-1")
        middle = child_run_id("nested-1:1:r1") or ""
        grandchild = child_run_id(f"{middle}:1:m1") or ""
        for run_id in ("nested-1", middle, grandchild):
            await _replays(client, run_id, task_queue)
    assert output.content == ("delegated: relayed: found: counted research y | opened relay "
                              "| opened delegate relay y")
    thread_id = (await store.get_run("nested-1")).thread_id
    assert (await store.get_run(grandchild)).thread_id == thread_id
    assert (await store.get_run(grandchild)).parent_run_id == middle
    log = await store.thread_messages(thread_id)
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    runs = _by_run(log)
    assert runs[grandchild] == [("user", "research y"), ("assistant", ""),
                                ("tool", "counted research y"),
                                ("assistant", "found: counted research y")]
    assert runs[middle][0] == ("user", "research relay y")
    assert [role for role, _ in runs["nested-1"]] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert await guest_runs(store, log) == {middle: "middler", grandchild: "researcher"}


async def test_a_child_from_its_callers_conversation_refers_to_its_messages(
        client: Client, task_queue: str, tmp_path: Path, thread_store: Store) -> None:
    store = thread_store
    registry = agents.registry(tmp_path / "count.log")
    options = TemporalOptions(task_queue=task_queue)
    served = served_agents(agents.definitions(registry), registry, options)
    async with agent_worker(client, served, options, store=store):
        output = await TemporalRunner(client, task_queue).run("confider", "brief z",
                                                              run_id="confide-1")
        child = child_run_id("confide-1:1:r1") or ""
        await _replays(client, child, task_queue)
    # The child saw the caller's conversation (its prompt left out), then its question.
    assert output.content == ("briefed: recalled: user:brief z / assistant:Asking. / "
                              "user:recall z")
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    runs = _by_run(log)
    # The caller's messages are not written again: only the asking message, without its
    # unanswered call, and the question.
    assert runs[child][:2] == [("assistant", "Asking."), ("user", "recall z")]
    assert sum(1 for m in log if m.message.content == "brief z") == 1


async def test_a_worker_killed_during_a_fan_out_on_the_thread_leaves_one_sequence(
        client: Client, task_queue: str, tmp_path: Path, thread_store_url: str,
        thread_store: Store, spawn: Spawn) -> None:
    store = thread_store
    count_log = tmp_path / "count.log"
    runner = TemporalRunner(client, task_queue)
    first = spawn("--store", thread_store_url, hang_gate=True)
    await runner.start("watcher", "watch w", run_id="watch-1")
    # The three children counted; prober's gate holds: its worker is killed there, and
    # another takes the run up.
    await asyncio.to_thread(said_until, first, lambda said: sum(
        line.startswith("counted") for line in said) >= 3 and any(
            line.startswith("gate") for line in said), "three counts and a gate")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    spawn("--store", thread_store_url)
    output = await within(runner.result("watch-1"), "the end of run watch-1")
    children = [child_run_id(f"watch-1:1:w{n}") or "" for n in (1, 2, 3)]
    assert output.content.startswith("watched: found: ")
    assert "probed: " in output.content
    # No tool ran twice (count is not idempotent), no message was written twice.
    assert count_log.read_text().count("\n") == 3
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    runs = _by_run(log)
    for run_id in children:
        assert (await store.get_run(run_id)).status is RunStatus.SUCCEEDED
        said = runs[run_id]
        assert said[0][0] == "user"
        assert said[-1][0] == "assistant"
        assert len(said) == (6 if run_id == children[2] else 4)
    assert [role for role, _ in runs["watch-1"]] == [
        "user", "assistant", "tool", "tool", "tool", "assistant"]
    await _replayed_elsewhere(client, task_queue, ("watch-1", *children), tmp_path)


async def _replayed_elsewhere(client: Client, task_queue: str, run_ids: Sequence[str],
                              tmp_path: Path) -> None:
    """The runs' histories replay on the agents that other processes' workers served
    (recorded)."""
    registry = agents.registry(tmp_path / "replayed.log")
    served = served_agents(agents.definitions(registry), registry,
                           TemporalOptions(task_queue=task_queue))
    catalogue.file(task_queue, {agent_id: replace(agent, recorded=True)
                                for agent_id, agent in served.items()})
    try:
        for run_id in run_ids:
            await _replays(client, run_id, task_queue)
    finally:
        catalogue.withdraw(task_queue, list(served))


async def test_a_child_on_the_thread_that_waits_pauses_its_caller_and_goes_on(
        worked: StoredAgents, client: Client, task_queue: str, tmp_path: Path) -> None:
    store, warden = worked.store, worked.operator("warden")
    with pytest.raises(RunPaused) as caught:
        await warden.aexecute("delegate pay", ALICE, run_id="warden-1")
    child = child_run_id("warden-1:1:r1") or ""
    assert [(call.call_id, call.run_id) for call in caught.value.pending] == [("n0", child)]
    assert (await store.get_run(child)).status is RunStatus.AWAITING_APPROVAL
    output = await warden.aresume_run("warden-1", ALICE, decisions={"n0": True})
    assert output.content == "delegated: found: counted research pay | opened delegate pay"
    for run_id in ("warden-1", child):
        assert (await store.get_run(run_id)).status is RunStatus.SUCCEEDED
    assert (await store.get_run(child)).thread_id == output.thread_id
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    assert _by_run(log)[child] == [("user", "research pay"), ("assistant", ""),
                                   ("tool", "counted research pay"),
                                   ("assistant", "found: counted research pay")]
    assert (tmp_path / "count.log").read_text().splitlines() == [f"{child}:1:n0"]
    for run_id in ("warden-1", child):
        await _replays(client, run_id, task_queue)
