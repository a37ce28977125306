"""From server-sent events to chunks: the assembler each wire format provides, and the loop
that drives one over a :class:`ProviderHttpClient` stream."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Protocol

from bloge.core.errors import ProviderError
from bloge.llm.providers.http_client import ProviderHttpClient
from bloge.llm.providers.sse import SseEvent
from bloge.llm.providers.wire import ServerStreamError, WireFormatError
from bloge.llm.types import LlmChunk


class StreamAssembler(Protocol):
    """Turns one wire format's stream events into chunks (one per provider)."""

    @property
    def stopped(self) -> bool:
        """Whether the server sent its end-of-stream event."""
        ...

    @property
    def finished(self) -> bool:
        """Whether the answer is complete."""
        ...

    def feed_data(self, data: str) -> list[LlmChunk]:
        """The chunks one event's data completes."""
        ...

    def finish(self) -> list[LlmChunk]:
        """The last chunks: held-back tool calls and the ``done`` chunk."""
        ...


async def assembled_stream(
    http: ProviderHttpClient, path: str, content: bytes, assembler: StreamAssembler
) -> AsyncGenerator[LlmChunk, None]:
    """POST ``content`` (a JSON body: :func:`json_content`) as a stream and yield the chunks
    ``assembler`` makes of its events.

    The HTTP stream is closed however the consumer stops; a stream that ends before the
    answer is complete, a malformed event or an error event raises :class:`ProviderError`.
    """
    events = http.stream_events(path, content)
    seen = False
    async with aclosing(events):
        try:
            async for event in events:
                seen = True
                for chunk in assembler.feed_data(event.data):
                    yield chunk
                if assembler.stopped:
                    await _drained(events)
                    break
            if not seen:
                # llama-cpp-python does so when it fails after its 200 (a tool_choice it
                # cannot stream, say): what it was asked is the clue.
                raise http.error("the server ended the stream without sending any event (did "
                                 "it fail after answering 200? its log says why)", request=content)
            if not assembler.finished:
                raise http.error("the stream ended before the answer was complete")
            final = assembler.finish()
        except WireFormatError as exc:
            raise http.error(str(exc)) from exc
        except ServerStreamError as exc:
            raise http.error(exc.message, retryable=exc.retryable) from exc
    for chunk in final:
        yield chunk


#: How long the rest of a body may take after the end-of-stream event before the connection
#: is closed instead of going back to the pool.
DRAIN_SECONDS = 1.0


async def _drained(events: AsyncIterator[SseEvent]) -> None:
    """Read what a server sends after its end-of-stream event (nothing, usually: the body
    ends) so that the connection goes back to the pool; a server that keeps the body open
    only costs its connection."""
    with contextlib.suppress(TimeoutError, ProviderError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass
