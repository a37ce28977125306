"""``StreamingAgentLoopOperator``: the same loop, emitting ``AgentStreamChunk`` values.

The loop runs as a producer task writing into a channel bounded by
``streaming_buffer_capacity``: a slow consumer slows the producer, and memory stays bounded.
Closing the stream (``aclose()``, leaving ``async with``, or dropping it after ``break``)
cancels the run — the provider stream is closed and running tools are cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from bloge.agent.loop.base import AgentOperatorBase, Context
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import AgentStreamChunk, Done
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.start import RunStart
from bloge.agent.loop.tools import ChunkSink
from bloge.core.sync import run_sync

_END: Any = object()


class StreamingAgentLoopOperator(AgentOperatorBase):
    """Runs the ReAct loop of ``agent_def`` and streams its progress.

    The model is reached through the ``"llmStreamingChat"`` operator. ``stream()`` yields
    ``Token``, ``ToolStart`` and ``ToolEnd`` chunks as they happen and ``Done`` last;
    ``execute()`` returns the whole list.
    """

    __slots__ = ()
    streaming = True

    def stream(
        self, input: object, ctx: Context = None, *, thread_id: str | None = None,
        run_id: str | None = None,
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The run's chunks; use ``async with contextlib.aclosing(...)`` to stop early.
        ``thread_id`` and ``run_id`` as for :meth:`AgentLoopOperator.aexecute`."""
        agent_input = AgentInput.of(input)
        return self._channel(lambda sink: self._start(agent_input, ctx, thread_id=thread_id,
                                                      run_id=run_id, sink=sink))

    async def arun(self, input: object, ctx: Context = None, *, on_chunk: ChunkSink,
                   thread_id: str | None = None, run_id: str | None = None) -> AgentOutput:
        """Run the agent streaming, awaiting ``on_chunk(chunk)`` for each ``Token``,
        ``ToolStart`` and ``ToolEnd`` as it happens, in the run's own task (no channel between
        them), and return its output. For callers that watch the run another way: a server
        follows a recorded run's events in ``store.live``. ``thread_id`` and ``run_id`` as for
        :meth:`stream`."""
        return await self._start(AgentInput.of(input), ctx, thread_id=thread_id, run_id=run_id,
                                 sink=on_chunk)

    async def arun_resumed(self, run_id: str, ctx: Context = None, *,
                           on_chunk: ChunkSink) -> AgentOutput:
        """:meth:`arun` for the recorded run ``run_id``, continued from its last completed
        step (see :meth:`AgentLoopOperator.aresume_run`)."""
        return await self._resume_run(run_id, ctx, on_chunk)

    def resume_run_stream(
        self, run_id: str, ctx: Context = None
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The chunks of the recorded run ``run_id``, continued from its last completed step
        (see :meth:`AgentLoopOperator.aresume_run`)."""
        return self._channel(lambda sink: self._resume_run(run_id, ctx, sink))

    def resume_stream(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The chunks of a run continued from ``checkpoint``."""
        start = RunStart(None if input is None else AgentInput.of(input), checkpoint=checkpoint)
        return self._channel(lambda sink: self._engine.run(start, ctx, sink=sink))

    async def aexecute(self, input: object, ctx: Context = None, *,
                       thread_id: str | None = None,
                       run_id: str | None = None) -> list[AgentStreamChunk]:
        """Every chunk of a run, ``Done`` last. ``thread_id`` and ``run_id`` as for
        :meth:`stream`."""
        return [chunk async for chunk in self.stream(input, ctx, thread_id=thread_id,
                                                     run_id=run_id)]

    def execute(self, input: object, ctx: Context = None, *,
                thread_id: str | None = None,
                run_id: str | None = None) -> list[AgentStreamChunk]:
        """The sync facade of :meth:`aexecute`."""
        return run_sync(self.aexecute(input, ctx, thread_id=thread_id, run_id=run_id),
                        method="execute")

    async def aresume_run(self, run_id: str, ctx: Context = None) -> list[AgentStreamChunk]:
        """Every chunk of the recorded run ``run_id``, continued."""
        return [chunk async for chunk in self.resume_run_stream(run_id, ctx)]

    def resume_run(self, run_id: str, ctx: Context = None) -> list[AgentStreamChunk]:
        """The sync facade of :meth:`aresume_run`."""
        return run_sync(self.aresume_run(run_id, ctx), method="resume_run")

    async def aresume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> list[AgentStreamChunk]:
        return [chunk async for chunk in self.resume_stream(checkpoint, input, ctx)]

    def resume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> list[AgentStreamChunk]:
        return run_sync(self.aresume(checkpoint, input, ctx), method="resume")

    async def _channel(
        self, produce: Callable[[ChunkSink], Awaitable[AgentOutput]]
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        capacity = self._engine.definition.streaming_buffer_capacity
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

