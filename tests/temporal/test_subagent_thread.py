"""A sub-agent on its caller's thread (``thread = "parent"``) on Temporal, as in process: the
child workflow's run has the caller's thread and the caller as its parent; its messages go
on the caller's log tagged with its run id, numbered from the thread's one sequence (three
children at once, and a grandchild, never take one number, nor do the caller's later
messages); the caller's model sees only the call's result, and the thread's next run starts
from the caller's view; the histories replay. On SQLite and PostgreSQL (see
tests/temporal/agents.py's fanner, nested, middler and confider)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client

from bloge.agent.runtime import child_run_id
from bloge.store import RunStatus, Store, StoredMessage, guest_runs, open_store
from bloge.temporal import TemporalOptions, TemporalRunner, agent_worker, served_agents
from tests.store.conftest import POSTGRES_DSN, postgres_schema  # noqa: F401 -- a fixture
from tests.temporal import agents
from tests.temporal.test_agent_calls import _replays


@pytest.fixture(params=["sqlite", "postgresql"])
async def thread_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """The run store, on each durable backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        url = f"{POSTGRES_DSN}?schema={request.getfixturevalue('postgres_schema')}"
    opened = open_store(url)
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
    assert await guest_runs(store, log) == dict.fromkeys(children, "researcher")
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
