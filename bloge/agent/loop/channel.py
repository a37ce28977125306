"""A run's chunks as an async iterator: the run produces into a bounded channel.

The loop runs as a producer task writing into a channel bounded by
``streaming_buffer_capacity``: a slow consumer slows the producer, and memory stays bounded.
Closing the stream (``aclose()``, leaving ``async with``, or dropping it after ``break``)
cancels the run — the provider stream is closed and running tools are cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from bloge.agent.loop.chunks import AgentStreamChunk, Done
from bloge.agent.loop.records import AgentOutput
from bloge.agent.loop.tools import ChunkSink

_END: Any = object()


async def chunk_channel(
    produce: Callable[[ChunkSink], Awaitable[AgentOutput]], capacity: int
) -> AsyncGenerator[AgentStreamChunk, None]:
    """The chunks ``produce(sink)`` hands its sink, then ``Done`` with its output; its failure
    is raised after the chunks that came before it."""
    channel: asyncio.Queue[Any] = asyncio.Queue(capacity)
    producer = asyncio.create_task(_produce(produce, channel))
    try:
        while True:
            # What is queued already is taken without a coroutine: one fewer per token.
            item = channel.get_nowait() if channel.qsize() else await channel.get()
            if item is _END:
                break
            yield item
        await producer  # re-raises the run's failure, if any
    except asyncio.CancelledError as cancelled:
        # The consumer was cancelled: pass on the cause the run's own cancellation carries
        # (the AgentRunError with its checkpoint), as a plain cancelled run does.
        cause = await _stop(producer)
        if cancelled.__cause__ is None and cause is not None:
            raise cancelled from cause
        raise
    finally:
        await _stop(producer)


async def _stop(producer: asyncio.Task[None]) -> BaseException | None:
    """Cancel the run unless it is over, wait for it, and return its cancellation's cause."""
    if not producer.done():
        producer.cancel()
        await asyncio.wait([producer])
    if not producer.cancelled():
        return None
    try:
        producer.result()
    except asyncio.CancelledError as cancelled:
        return cancelled.__cause__
    return None


async def _produce(
    produce: Callable[[ChunkSink], Awaitable[AgentOutput]], channel: asyncio.Queue[Any]
) -> None:
    try:
        output = await produce(channel.put)
        await channel.put(Done(output))
    except asyncio.CancelledError:
        raise
    except BaseException:
        await channel.put(_END)  # wake the consumer, which then awaits this task's error
        raise
    await channel.put(_END)
