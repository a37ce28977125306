"""Server-sent events out: frames, and the response that streams them.

``EventStream`` sends the frames an async iterator gives, a keep-alive comment whenever none
came for ``keepalive`` seconds (proxies drop idle connections), and gives up on a client that
has not taken a frame for ``send_timeout`` seconds (a client that stops reading must not hold
the server). When the client goes away the iterator is closed and ``on_disconnect`` is called.
When the server ends the response (its shutdown grace is over), ``on_disconnect`` is called too
and the stream ends with ``closing`` (a frame saying why), a well-formed end of the body.
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
                 closing: bytes = b"", status: int = 200) -> None:
        # Not Response.__init__, which would send a body and its content-length.
        self.status_code = status
        self.background = None
        self.raw_headers = list(HEADERS)
        self.frames = frames
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.on_disconnect = on_disconnect
        self.closing = closing
        self.status = status

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)
        clock = _SendClock()
        producer = asyncio.create_task(self._produce(queue))
        sender = asyncio.create_task(self._send_all(queue, send, clock))
        watcher = asyncio.create_task(_disconnected(receive))
        try:
            if await self._watch(queue, clock, sender, watcher):
                sender.result()
            else:
                sender.cancel()
                await self._disconnected()
        except asyncio.CancelledError:  # the server ended the response (at its shutdown)
            await self._disconnected()
            await self._close_at_shutdown(sender, clock, send)
        finally:
            for task in (producer, sender, watcher):
                task.cancel()
            await asyncio.gather(producer, sender, watcher, return_exceptions=True)
            await _close(self.frames)

    async def _watch(self, queue: asyncio.Queue[Any], clock: _SendClock,
                     sender: asyncio.Task[None], watcher: asyncio.Task[None]) -> bool:
        """Wait for the stream to end (``True``) or the client to be gone (``False``): it
        disconnected, or a send has waited ``send_timeout``. Meanwhile, a ping whenever
        nothing was sent for ``keepalive``. The deadlines are checked when they come, not
        set for each send: a frame costs no timer."""
        loop = asyncio.get_running_loop()
        while True:
            sending = clock.sending_since
            # Idle, a send may start any moment: look again within send_timeout at the latest.
            deadline = (sending + self.send_timeout if sending is not None
                        else min(clock.last_sent + self.keepalive,
                                 loop.time() + self.send_timeout))
            done, _ = await asyncio.wait({sender, watcher}, timeout=deadline - loop.time(),
                                         return_when=asyncio.FIRST_COMPLETED)
            if watcher in done:
                return False
            if sender in done:
                return True
            now = loop.time()
            if clock.sending_since is not None:
                if now - clock.sending_since >= self.send_timeout:
                    return False  # a client that stopped reading
            elif now - clock.last_sent >= self.keepalive and queue.empty():
                clock.last_sent = now
                queue.put_nowait(PING)

    async def _close_at_shutdown(self, sender: asyncio.Task[None], clock: _SendClock,
                                 send: Send) -> None:
        """End the body with ``closing`` instead of letting the cancellation escape: uvicorn
        would log it as an "Exception in ASGI application" traceback and cut the body off
        mid-stream. The cancellation is taken back (``uncancel``) because it is answered."""
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)
        if not clock.started:
            await send({"type": "http.response.start", "status": self.status,
                        "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.closing, "more_body": False})

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

    async def _send_all(self, queue: asyncio.Queue[Any], send: Send, clock: _SendClock) -> None:
        """Send the frames as they come; those queued meanwhile go together, in one body."""
        await clock.timed(send({"type": "http.response.start", "status": self.status,
                                "headers": self.raw_headers}))
        clock.started = True
        ended = False
        while not ended:
            item = await queue.get()
            if item is _END:
                break
            if not queue.empty():
                parts = [item]
                while not queue.empty():
                    item = queue.get_nowait()
                    if item is _END:
                        ended = True
                        break
                    parts.append(item)
                item = b"".join(parts)
            await clock.timed(send({"type": "http.response.body", "body": item,
                                    "more_body": True}))
        await clock.timed(send({"type": "http.response.body", "body": b"",
                                "more_body": False}))

    async def _disconnected(self) -> None:
        if self.on_disconnect is not None:
            result = self.on_disconnect()
            if result is not None:
                await result


class _SendClock:
    """When the stream last sent, and since when a send has been waiting (``None``: none)."""

    __slots__ = ("_loop", "last_sent", "sending_since", "started")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.started = False  # whether the response's start was sent
        self.last_sent = self._loop.time()
        self.sending_since: float | None = None

    async def timed(self, sending: Awaitable[None]) -> None:
        self.sending_since = self._loop.time()
        await sending
        self.last_sent = self._loop.time()
        self.sending_since = None


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _close(frames: AsyncIterator[bytes]) -> None:
    close = getattr(frames, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
