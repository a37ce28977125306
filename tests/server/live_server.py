"""A real uvicorn server on 127.0.0.1 (an ephemeral port), in a thread, for tests about the
server: ``with LiveServer(app) as server: httpx.get(server.url("/healthz"))``."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any, Self

import uvicorn

WAIT_SECONDS = 30.0


class _Server(uvicorn.Server):
    """Says when it is listening, instead of being polled for it."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = threading.Event()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        self.listening.set()

    def install_signal_handlers(self) -> None:
        """The test process keeps its own signal handlers."""


class LiveServer:
    def __init__(self, app: Any, *, timeout_graceful_shutdown: float | None = 5.0,
                 **options: Any) -> None:
        """``options``: more of uvicorn's settings (``bloge serve``'s, from
        :func:`bloge.server.connections.uvicorn_options`)."""
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **options,
            # Config says int; it goes to asyncio.timeout, which takes the float tests give.
            timeout_graceful_shutdown=timeout_graceful_shutdown,  # type: ignore[arg-type]  # see above
        )
        self.server = _Server(config)
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def port(self) -> int:
        port: int = self.server.servers[0].sockets[0].getsockname()[1]
        return port

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        if not self.server.listening.wait(WAIT_SECONDS):
            raise RuntimeError("the server did not start")
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(WAIT_SECONDS)
