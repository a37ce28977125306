"""How long a connection may keep the server waiting, and how many it holds at once.

uvicorn closes a connection idle between requests (``timeout_keep_alive``) and answers 503
past ``limit_concurrency`` connections, but waits forever for a request's headers and body:
a client that sends a byte a minute (slowloris), or nothing at all, holds its connection for
good, and a few hundred of them fill the server. :class:`DeadlineH11Protocol`, uvicorn's h11
protocol with two deadlines, closes a connection whose request headers are not all in
``header_timeout`` seconds after the request's first byte (or after the connection opened),
and one whose request body is not all in ``body_timeout`` seconds after its headers. Once a
request is in, no deadline runs: an answer, and a stream, take as long as they take.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Literal

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from bloge.server.config import ServerConfig

Awaited = Literal["headers", "body"]


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request's headers or body are late
    (see the module docs)."""

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None, *, header_timeout: float,
                 body_timeout: float) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._timeouts: dict[Awaited, float] = {"headers": header_timeout,
                                                "body": body_timeout}
        self._awaited: Awaited | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's own narrowing
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._await(None)
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Run the deadline of what the client owes now: the rest of a request's headers, the
        rest of its body, or nothing (a request being answered; an idle connection between
        requests, which uvicorn's keep-alive timeout closes)."""
        state = self.conn.their_state
        if self.transport.is_closing():
            self._await(None)
        elif state is h11.SEND_BODY:
            self._await("body")
        elif state is h11.IDLE and self.timeout_keep_alive_task is None:
            self._await("headers")
        else:
            self._await(None)

    def _await(self, awaited: Awaited | None) -> None:
        """Wait for ``awaited``, by the deadline that started when the wait did: more bytes of
        the same headers or body never move it."""
        if awaited == self._awaited:
            return
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._awaited = awaited
        if awaited is not None:
            self._deadline = self.loop.call_later(self._timeouts[awaited], self._expired)

    def _expired(self) -> None:
        """The client is late: close the connection. A request whose body was being read
        sees the client gone (``http.disconnect``)."""
        self._deadline = None
        self._awaited = None
        if not self.transport.is_closing():
            self.transport.close()


def uvicorn_options(config: ServerConfig) -> dict[str, Any]:
    """uvicorn's settings for a server run as ``config`` says: the protocol with its deadlines
    (picklable, for ``--workers N``), the keep-alive timeout, the connection cap and the
    listen backlog."""
    return {"http": functools.partial(DeadlineH11Protocol, header_timeout=config.header_timeout,
                                      body_timeout=config.body_timeout),
            "timeout_keep_alive": config.idle_timeout,
            "limit_concurrency": config.max_connections, "backlog": config.backlog}
