"""The SSE response on its own: frames, keep-alives, a client that stops reading."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from bloge.server.sse import PING, EventStream, frame


def test_a_frame_carries_its_id_event_and_every_data_line() -> None:
    assert frame("a\nb", event="token", event_id=7) == b"id: 7\nevent: token\ndata: a\ndata: b\n\n"


async def test_a_client_that_stops_reading_is_dropped_and_told_as_a_disconnect() -> None:
    stuck = asyncio.Event()
    dropped = asyncio.Event()

    async def frames() -> AsyncIterator[bytes]:
        while True:
            yield frame("x")

    async def receive() -> dict[str, object]:
        await asyncio.Event().wait()  # the client never says anything
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        if message.get("more_body"):
            stuck.set()
            await asyncio.Event().wait()  # a client whose window is full: never drains

    stream = EventStream(frames(), keepalive=10, send_timeout=0.05, on_disconnect=dropped.set)
    await stream({"type": "http"}, receive, send)  # type: ignore[arg-type]  # a fake ASGI peer
    assert stuck.is_set()
    assert dropped.is_set()


async def test_a_quiet_stream_pings() -> None:
    sent: list[bytes] = []
    finish = asyncio.Event()

    async def frames() -> AsyncIterator[bytes]:
        await finish.wait()
        yield frame("done")

    async def receive() -> dict[str, object]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        body = message.get("body")
        if isinstance(body, bytes) and body:
            sent.append(body)
            if body == PING:
                finish.set()

    await EventStream(frames(), keepalive=0.01, send_timeout=5)(  # type: ignore[arg-type]  # a fake ASGI peer
        {"type": "http"}, receive, send)
    assert sent[0] == PING
    assert sent[-1] == frame("done")
