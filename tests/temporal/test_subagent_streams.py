"""What a caller on Temporal sees of its child workflows, as a local caller does of its
sub-agents: their chunks in its stream (nested under the call, at any depth, also from a child
a worker took up after another stopped), and, for a ``context = "parent"`` sub-agent, a child
that starts from its conversation. ``herald`` streams and asks ``middle``, which asks
``researcher``; ``briefer`` asks ``researcher`` from its conversation
(tests/temporal/agents.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import replace
from pathlib import Path

import httpx
from temporalio.client import Client

from bloge import AgentLoopOperator, AgentStreamChunk, Done, SubAgentChunk, ToolEnd, ToolStart
from bloge.agent.materialize import agent_operator
from bloge.agent.runtime import child_run_id
from bloge.core.context import OperatorContext, Principal
from bloge.server import ServedAgents, create_app
from bloge.server.launch import STREAMED
from bloge.store import Store
from bloge.temporal import (
    Connection,
    TemporalOptions,
    TemporalRunner,
    TemporalRunStore,
    agent_worker,
    served_agents,
)
from tests.processes import said_until
from tests.server.live_server import LiveServer
from tests.server.test_runs_api import sse_events
from tests.temporal import agents
from tests.temporal.conftest import DevServer, Spawn, within
from tests.temporal.test_agent_calls import _replays

ALICE = OperatorContext.root(principal=Principal("alice"))
HERALDED = ("delegated: relayed: found: counted research pay | opened relay | "
            "opened delegate relay pay")
BRIEFED = "briefed: recalled: user:brief pay / assistant:Asking. / user:recall pay"
#: A payload limit a thread's conversation passes within a few runs.
LIMIT = 300_000


def _unnamed(chunk: AgentStreamChunk) -> AgentStreamChunk:
    """``chunk`` with its sub-agents' run ids left out (a local run's children are not
    recorded)."""
    if isinstance(chunk, SubAgentChunk):
        inner = _unnamed(chunk.chunk)
        assert not isinstance(inner, Done)
        return replace(chunk, run_id=None, chunk=inner)
    return chunk


async def _streamed(operator: AgentLoopOperator, text: str, *,
                    run_id: str | None = None) -> list[AgentStreamChunk]:
    return [chunk async for chunk in operator.stream(text, ALICE, run_id=run_id)]


async def test_a_streamed_caller_sees_its_child_workflows_chunks_as_a_local_caller_does(
        client: Client, task_queue: str, tmp_path: Path, store: Store,
        temporal_server: DevServer) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    local = await _streamed(AgentLoopOperator("herald", definitions["herald"], registry),
                            "delegate relay pay")
    options = TemporalOptions(task_queue=task_queue)
    runs = TemporalRunStore(store, Connection(temporal_server.address), task_queue,
                            client=client)
    async with agent_worker(client, served_agents(definitions, registry, options), options,
                            store=store):
        remote = await _streamed(AgentLoopOperator("herald", definitions["herald"], registry,
                                                   store=runs),
                                 "delegate relay pay", run_id="herald-1")
        middle = child_run_id("herald-1:1:r1")
        assert middle is not None
        await _replays(client, "herald-1", task_queue)
        await _replays(client, middle, task_queue)
    researcher = child_run_id(f"{middle}:1:m1")
    assert isinstance(remote[-1], Done)
    assert remote[-1].final_output.content == HERALDED
    # The same chunks, in the same order, as in process: the children's nested under the
    # calls that run them, two levels down.
    assert [_unnamed(c) for c in remote[:-1]] == [_unnamed(c) for c in local[:-1]]
    nested = [c for c in remote if isinstance(c, SubAgentChunk)]
    assert {(c.tool_call_id, c.run_id) for c in nested} == {("r1", middle)}
    deepest = [c.chunk for c in nested if isinstance(c.chunk, SubAgentChunk)]
    assert {(c.tool_call_id, c.run_id) for c in deepest} == {("m1", researcher)}
    assert [c.chunk for c in deepest if not isinstance(c.chunk, SubAgentChunk)
            and not hasattr(c.chunk, "text")] == [
        ToolStart("count", "n0", 1), ToolEnd("count", "n0", success=True, turn_number=1)]
    # The caller's record keeps them as its subagent events, as a local caller's does.
    kept = [e.body for e in await store.run_events("herald-1") if e.type == "subagent"]
    assert len(kept) == len(nested)
    assert {"tool": "research", "call_id": "m1", "run_id": researcher, "event": "tool_start",
            "body": {"tool": "count", "call_id": "n0", "turn": 1}} in [
        k["body"] for k in kept if k["event"] == "subagent"]


async def _served_herald(client: Client, task_queue: str, tmp_path: Path, store: Store,
                         temporal_server: DevServer) -> httpx.Response:
    """``herald``'s streamed run through ``bloge serve``, run by a worker in this process
    that writes to the server's own store."""
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    options = TemporalOptions(task_queue=task_queue)
    runs = TemporalRunStore(store, Connection(temporal_server.address), task_queue)
    app = create_app(ServedAgents({"herald": definitions["herald"]}, lambda definition:
                                  agent_operator(definition.id, definition, registry,
                                                 store=runs)), store=store)
    async with agent_worker(client, served_agents(definitions, registry, options), options,
                            store=store):
        with LiveServer(app) as server:
            async with httpx.AsyncClient(timeout=60) as http:
                streamed = await http.post(server.url("/agents/herald/runs"),
                                           json={"input": "delegate relay pay",
                                                 "stream": True})
    assert streamed.status_code == 200, streamed.text
    return streamed


async def test_bloge_serve_streams_a_child_workflows_chunks_as_subagent_events(
        client: Client, task_queue: str, tmp_path: Path, store: Store,
        temporal_server: DevServer) -> None:
    streamed = await _served_herald(client, task_queue, tmp_path, store, temporal_server)
    run_id = streamed.headers["bloge-run-id"]
    middle = child_run_id(f"{run_id}:1:r1")
    events = [(line[7:], json.loads(data[6:])) for line, data in zip(
        streamed.text.splitlines(), streamed.text.splitlines()[1:], strict=False)
        if line.startswith("event: ") and data.startswith("data: ")]
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done"
    relayed = [body for kind, body in events if kind == "subagent"]
    assert relayed
    assert all((b["tool"], b["call_id"], b["run_id"]) == ("research", "r1", middle)
               for b in relayed)
    assert {"tool_start", "tool_end", "subagent"} <= {b["event"] for b in relayed}
    # The call's own start comes before its child's chunks, its end after them.
    first, last = kinds.index("subagent"), len(kinds) - 1 - kinds[::-1].index("subagent")
    assert events[first - 1] == ("tool_start", {"tool": "research", "call_id": "r1",
                                                "turn": 1})
    assert events[last + 1][0] == "tool_end"


async def test_bloge_serve_streams_each_stored_event_of_a_temporal_run_once_in_order(
        client: Client, task_queue: str, tmp_path: Path, store: Store,
        temporal_server: DevServer) -> None:
    # The worker writes to the server's own store, in the server's process: what its
    # activities keep reaches the stream only as the store numbers it, never also as they
    # keep it (twice then, numbered by each activity, ahead of a child's chunks written
    # before them).
    streamed = await _served_herald(client, task_queue, tmp_path, store, temporal_server)
    stored = await store.run_events(streamed.headers["bloge-run-id"])
    assert [(int(e["id"]), e["event"], e["data"]) for e in sse_events(streamed.text)] == [
        (e.seq, e.type, e.body) for e in stored if e.type in STREAMED]


async def test_a_child_taken_up_by_another_worker_goes_on_relaying_its_chunks(
        temporal_server: DevServer, client: Client, task_queue: str, tmp_path: Path,
        store: Store, spawn: Spawn) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    runs = TemporalRunStore(store, Connection(temporal_server.address), task_queue,
                            client=client)
    herald = AgentLoopOperator("herald", definitions["herald"], registry, store=runs)
    first = spawn("--store", url, hang_gate=True)
    streaming = asyncio.ensure_future(_streamed(herald, "delegate relay pay",
                                                run_id="herald-2"))
    # middle's gate holds: its worker is killed there, and another takes middle up.
    said = await asyncio.to_thread(said_until, first, lambda said: any(
        line.startswith("gate") for line in said), "a gate")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    spawn("--store", url)
    chunks = await within(streaming, "the end of run herald-2's stream")
    middle = child_run_id("herald-2:1:r1")
    assert said[-1] == f"gate {middle}:2:g1"
    assert isinstance(chunks[-1], Done)
    assert chunks[-1].final_output.content == HERALDED
    # The gate's end came from the worker that took middle up, relayed as before.
    assert SubAgentChunk("research", "r1", middle, ToolEnd("gate", "g1", success=True,
                                                          turn_number=2)) in chunks


async def test_a_parent_context_child_workflow_starts_from_its_callers_conversation(
        client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    local = await AgentLoopOperator("briefer", definitions["briefer"], registry).aexecute(
        "brief pay")
    assert local.content == BRIEFED
    options = TemporalOptions(task_queue=task_queue)
    async with agent_worker(client, served_agents(definitions, registry, options), options,
                            store=store):
        output = await TemporalRunner(client, task_queue).run("briefer", "brief pay",
                                                              run_id="brief-1")
        child = child_run_id("brief-1:1:r1")
        assert child is not None
        await _replays(client, "brief-1", task_queue)
        await _replays(client, child, task_queue)
    # As in process: the caller's messages without its system prompt and the call still
    # waiting (its text kept), then the question.
    assert output.content == BRIEFED
    # The child's thread starts with them, once; the caller's is left as it is.
    run = await store.get_run(child)
    kept = [(m.message.role, m.message.content)
            for m in await store.thread_messages(run.thread_id)]
    assert kept == [("user", "brief pay"), ("assistant", "Asking."), ("user", "recall pay"),
                    ("assistant", BRIEFED.removeprefix("briefed: "))]
    caller = await store.get_run("brief-1")
    assert [m.message.role for m in await store.thread_messages(caller.thread_id)] == [
        "system", "user", "assistant", "tool", "assistant"]


async def test_a_parent_context_child_too_large_to_start_is_the_calls_error(
        client: Client, task_queue: str, tmp_path: Path, store: Store) -> None:
    registry = agents.registry(tmp_path / "count.log")
    definitions = agents.definitions(registry)
    options = TemporalOptions(task_queue=task_queue, max_payload_bytes=LIMIT)
    async with agent_worker(client, served_agents(definitions, registry, options), options,
                            store=store):
        runner = TemporalRunner(client, task_queue, max_payload_bytes=LIMIT)
        # The thread grows past the limit, a run at a time (each payload within it: a
        # recorded run's view goes by reference) ...
        for _ in range(3):
            await runner.run("reader", "read " + "x" * (LIMIT // 2), thread_id="big")
        # ... which a child that starts from the conversation would carry whole.
        output = await runner.run("briefer", "brief pay", thread_id="big")
    assert output.content.startswith(
        "briefed: Error: tool 'research' failed: sub-agent 'researcher' was not started: its "
        "start, which carries this run's conversation (context = \"parent\"), would be ")
