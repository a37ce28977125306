"""One business suite, three transports: in-process, HTTP (a real uvicorn on 127.0.0.1) and
NATS (the server at ``BLOGE_TEST_NATS_URL``, default 127.0.0.1:4222)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass

import pytest

from bloge import rpc
from bloge.rpc.asgi import rpc_app
from tests.cli.conftest import app  # noqa: F401 -- the repository's application, a fixture
from tests.container.conftest import project  # noqa: F401 -- ditto, for the container
from tests.store.conftest import REQUIRED
from tests.uvicorn_server import UvicornServer

NATS_URL = os.environ.get("BLOGE_TEST_NATS_URL", "nats://127.0.0.1:4222")
TRANSPORTS = ("in-process", "http", "nats")


def nats_or_skip() -> None:
    """Skip (fail, in CI) when there is no NATS server to test against."""
    host, _, port = NATS_URL.removeprefix("nats://").rpartition("@")[2].partition(":")
    try:
        socket.create_connection((host, int(port or 4222)), timeout=3).close()
    except OSError as exc:
        reason = f"NATS is not reachable at {NATS_URL}: {exc}"
    else:
        return
    if REQUIRED:
        pytest.fail(f"BLOGE_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


Link = Callable[[Mapping[str, rpc.Handler]], Awaitable[rpc.Transport]]
"""``await link(handlers)`` → a transport reaching ``handlers`` over the transport under test."""


@pytest.fixture(params=TRANSPORTS)
def transport_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def link(transport_kind: str) -> AsyncIterator[Link]:
    # A subject prefix of this test's own: tests never answer each other's calls.
    prefix = f"test{uuid.uuid4().hex[:12]}"
    async with AsyncExitStack() as stack:

        async def connect(handlers: Mapping[str, rpc.Handler]) -> rpc.Transport:
            if transport_kind == "in-process":
                local = rpc.InProcessTransport()
                for name, handler in handlers.items():
                    local.register(name, handler)
                return local
            if transport_kind == "http":
                server = stack.enter_context(UvicornServer(rpc_app(handlers)))
                return await stack.enter_async_context(rpc.HttpTransport(server.url("")))
            nats_or_skip()
            await stack.enter_async_context(
                rpc.NatsResponder(handlers, NATS_URL, subject_prefix=prefix))
            remote = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
            stack.push_async_callback(remote.aclose)
            return remote

        yield connect


@dataclass
class OwnNats:
    """A NATS server of the test's own, on a free port, that the test may restart."""

    port: int
    process: subprocess.Popen[str] | None = None
    #: More options of nats-server (``--user``, ``--pass``, …).
    options: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("nats-server")
        assert binary is not None
        self.process = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(self.port),
                                         *self.options],
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if "Server is ready" in line:
                return
        raise RuntimeError("nats-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            assert self.process.stderr is not None
            self.process.stderr.close()
            self.process = None


@pytest.fixture
def own_nats() -> Iterator[OwnNats]:
    if shutil.which("nats-server") is None:
        reason = "nats-server is not installed (Debian: apt-get install nats-server)"
        if REQUIRED:
            pytest.fail(f"BLOGE_REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = OwnNats(port)
    server.start()
    yield server
    server.stop()
