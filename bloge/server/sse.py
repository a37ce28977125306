"""Server-sent events out: frames, and the response that streams them.

``EventStream`` sends the frames an async iterator gives, a keep-alive comment whenever none
came for ``keepalive`` seconds (proxies drop idle connections), and gives up on a client that
has not taken a frame for ``send_timeout`` seconds (a client that stops reading must not hold
the server). When the client goes away the iterator is closed and ``on_disconnect`` is called.
When the server ends the response (its shutdown grace is over), ``on_disconnect`` is called too
and the stream ends with what ``closing()`` gives (a frame saying why; made only then, for
every open stream would keep it), a well-formed end of the body.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import Response

from bloge.server.guard import Receive, Scope, Send

PING = b": ping\n\n"

#: The message of the cancellation that stops the sending of a client that is gone (any
#: other is the server's, at its shutdown).
_GONE = "the client is gone"

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
                 closing: Callable[[], bytes] | None = None, status: int = 200) -> None:
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
        clock = _SendClock(send)
        sending = asyncio.current_task()
        assert sending is not None
        # One task besides this one, whatever the number of frames: this one sends each frame
        # as the iterator gives it; the watcher waits for the client's disconnect.
        watcher = asyncio.create_task(self._watch(clock, receive, sending))
        try:
            # The frames as they come, then the end of the body; frames that fail end the body
            # too (what failed is the run's to tell, in its events). In this frame, not one
            # of its own: every open stream keeps it.
            await clock.timed({"type": "http.response.start", "status": self.status,
                               "headers": self.raw_headers})
            clock.started = True
            with contextlib.suppress(Exception):
                async for item in self.frames:
                    await clock.timed({"type": "http.response.body", "body": item,
                                       "more_body": True})
            clock.stop_pinging()
            await clock.timed({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError as cancelled:
            if _GONE not in cancelled.args:  # the server ended the response (its shutdown)
                await self._disconnected()
                await self._close_at_shutdown(clock)
            else:  # ours: the client is gone
                sending.uncancel()
                await self._disconnected()
        finally:
            clock.ended = True
            clock.stop_pinging()
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await _close(self.frames)

    async def _watch(self, clock: _SendClock, receive: Receive,
                     sending: asyncio.Task[Any]) -> None:
        """Wait for the client to be gone — it disconnected, or a send has waited
        ``send_timeout`` — and then stop the sending (``sending``, unless it has ended).
        Meanwhile, a ping whenever nothing was sent for ``keepalive``. The deadlines are
        checked when they come, not set for each send: a frame costs no timer."""
        loop = asyncio.get_running_loop()
        while True:
            sending_since = clock.sending_since
            # Idle, a send may start any moment: look again within send_timeout at the latest.
            deadline = (sending_since + self.send_timeout if sending_since is not None
                        else min(clock.last_sent + self.keepalive,
                                 loop.time() + self.send_timeout))
            try:
                async with asyncio.timeout_at(deadline):
                    # Waiting for a message takes none of it.
                    while (await receive())["type"] != "http.disconnect":
                        pass
                break
            except TimeoutError:
                pass
            now = loop.time()
            if clock.sending_since is not None:
                if now - clock.sending_since >= self.send_timeout:
                    break  # a client that stopped reading
            elif now - clock.last_sent >= self.keepalive:
                clock.ping()
        if not clock.ended:
            sending.cancel(_GONE)

    async def _close_at_shutdown(self, clock: _SendClock) -> None:
        """End the body with ``closing()`` instead of letting the cancellation escape: uvicorn
        would log it as an "Exception in ASGI application" traceback and cut the body off
        mid-stream. The cancellation is taken back (``uncancel``) because it is answered."""
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        clock.stop_pinging()
        if not clock.started:
            await clock.send({"type": "http.response.start", "status": self.status,
                              "headers": self.raw_headers})
        closing = b"" if self.closing is None else self.closing()
        await clock.send({"type": "http.response.body", "body": closing, "more_body": False})

    async def _disconnected(self) -> None:
        if self.on_disconnect is not None:
            result = self.on_disconnect()
            if result is not None:
                await result


class _SendClock:
    """Sends one response's messages, one at a time; keeps when it last sent and since when a
    send has been waiting (``None``: none)."""

    __slots__ = ("_lock", "_loop", "_ping", "_waiting", "ended", "last_sent", "pinging",
                 "send", "sending_since", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self._loop = asyncio.get_running_loop()
        # A ping goes out while the sender waits for its next frame, which may come meanwhile.
        self._lock = asyncio.Lock()
        self._ping: asyncio.Task[None] | None = None
        self._waiting = 0
        self.started = False  # whether the response's start was sent
        self.ended = False  # whether the sending ended (nothing is left to stop)
        self.pinging = True  # False once the body ends
        self.last_sent = self._loop.time()
        self.sending_since: float | None = None

    async def timed(self, message: dict[str, Any]) -> None:
        if not self._waiting:
            self.sending_since = self._loop.time()
        self._waiting += 1
        try:
            async with self._lock:
                await self.send(message)
            self.last_sent = self._loop.time()
        finally:
            self._waiting -= 1
            if not self._waiting:
                self.sending_since = None

    def ping(self) -> None:
        """Send a keep-alive comment, beside the sender (which waits for its next frame)."""
        self.last_sent = self._loop.time()
        if self.started and self.pinging and self._ping is None:
            self._ping = asyncio.create_task(self._pinged())

    async def _pinged(self) -> None:
        await self.timed({"type": "http.response.body", "body": PING, "more_body": True})
        self._ping = None

    def stop_pinging(self) -> None:
        """No ping from now on: the body ends."""
        self.pinging = False
        if self._ping is not None:
            self._ping.cancel()
            self._ping = None


async def _close(frames: AsyncIterator[bytes]) -> None:
    close = getattr(frames, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
