"""Server-sent events out: frames, and the response that streams them.

``EventStream`` sends the frames an async iterator gives, a keep-alive comment whenever none
came for ``keepalive`` seconds (proxies drop idle connections), and gives up on a client that
has not taken a frame for ``send_timeout`` seconds (a client that stops reading must not hold
the server). When the client goes away the iterator is closed and ``on_disconnect`` is called.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import Response

from bloge.server.guard import Receive, Scope, Send

PING = b": ping\n\n"
_END: Any = object()

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"),
           (b"cache-control", b"no-cache, no-store"),
           (b"x-accel-buffering", b"no")]


def frame(data: str, *, event: str | None = None, event_id: int | None = None) -> bytes:
    """One event: its ``id:`` and ``event:`` lines, then ``data:`` (one line per line)."""
    lines = [] if event_id is None else [f"id: {event_id}"]
    if event is not None:
        lines.append(f"event: {event}")
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class EventStream(Response):
    """An ASGI response streaming ``frames`` (see the module docs)."""

    def __init__(self, frames: AsyncIterator[bytes], *, keepalive: float, send_timeout: float,
                 on_disconnect: Callable[[], Awaitable[None] | None] | None = None,
                 status: int = 200) -> None:
        # Not Response.__init__, which would send a body and its content-length.
        self.status_code = status
        self.background = None
        self.raw_headers = list(HEADERS)
        self.frames = frames
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.on_disconnect = on_disconnect
        self.status = status

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)
        producer = asyncio.create_task(self._produce(queue))
        sender = asyncio.create_task(self._send_all(queue, send))
        watcher = asyncio.create_task(_disconnected(receive))
        try:
            done, _ = await asyncio.wait({sender, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher in done:
                sender.cancel()
                await self._disconnected()
            else:
                sender.result()  # a client that stopped reading ends here (TimeoutError)
        except TimeoutError:
            await self._disconnected()
        finally:
            for task in (producer, sender, watcher):
                task.cancel()
            await asyncio.gather(producer, sender, watcher, return_exceptions=True)
            await _close(self.frames)

    async def _produce(self, queue: asyncio.Queue[Any]) -> None:
        try:
            async for item in self.frames:
                await queue.put(item)
        except asyncio.CancelledError:
            raise  # the response is over already: nobody reads the queue
        except BaseException:
            await queue.put(_END)  # the frames failed: the stream ends
            raise
        await queue.put(_END)

    async def _send_all(self, queue: asyncio.Queue[Any], send: Send) -> None:
        async with asyncio.timeout(self.send_timeout):
            await send({"type": "http.response.start", "status": self.status,
                        "headers": self.raw_headers})
        while True:
            try:
                async with asyncio.timeout(self.keepalive):
                    item = await queue.get()
            except TimeoutError:
                item = PING
            if item is _END:
                break
            async with asyncio.timeout(self.send_timeout):
                await send({"type": "http.response.body", "body": item, "more_body": True})
        async with asyncio.timeout(self.send_timeout):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _disconnected(self) -> None:
        if self.on_disconnect is not None:
            result = self.on_disconnect()
            if result is not None:
                await result


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _close(frames: AsyncIterator[bytes]) -> None:
    close = getattr(frames, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
