"""A real uvicorn server on 127.0.0.1 and an ephemeral port, serving an ASGI app on a thread.

For tests about an ASGI application as clients meet it: real sockets, real HTTP parsing, the
``lifespan`` protocol (on, so that an app that does not answer it fails to start)::

    with UvicornServer(agent.as_handler()) as server:
        httpx.post(server.url("/chat"), content="hello")
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Any, Self

import uvicorn

# Generous: only reached when a test is about to fail anyway.
WAIT_SECONDS = 10.0


class UvicornServer:
    """Serves ``app`` while the ``with`` block runs; startup and shutdown are waited for."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="on",
                                log_config=None, access_log=False)
        self.server = _Server(config)
        self._thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    @property
    def port(self) -> int:
        sockets = self.server.servers[0].sockets
        port: int = sockets[0].getsockname()[1]
        return port

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        if not self.server.ready.wait(WAIT_SECONDS) or not self.server.started:
            raise RuntimeError("uvicorn did not start; its log says why")
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.server.should_exit = True
        self._thread.join(WAIT_SECONDS)
        if self._thread.is_alive():
            raise RuntimeError("uvicorn did not shut down")


class _Server(uvicorn.Server):
    """Tells the test thread when startup is over (``started`` says whether it succeeded)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()
