"""``StreamingAgentLoopOperator``: the same loop, every run streamed, its chunks returned."""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any

from bloge.agent.loop.base import AgentOperatorBase, Context
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.tools import ChunkSink
from bloge.core.sync import run_sync
from bloge.llm.types import ToolDefinition


class StreamingAgentLoopOperator(AgentOperatorBase):
    """Runs the ReAct loop of ``agent_def`` and streams its progress.

    The model is reached through the ``"llmStreamingChat"`` operator in every run.
    ``stream()`` yields ``Token``, ``ToolStart`` and ``ToolEnd`` chunks as they happen and
    ``Done`` last, as for any agent operator; ``execute()`` returns the whole list.
    """

    __slots__ = ()
    streaming = True

    def arun(self, input: object, ctx: Context = None, *, on_chunk: ChunkSink,
             thread_id: str | None = None, run_id: str | None = None,
             tools: Sequence[ToolDefinition] = ()) -> Coroutine[Any, Any, AgentOutput]:
        """Run the agent streaming, awaiting ``on_chunk(chunk)`` for each ``Token``,
        ``ToolStart`` and ``ToolEnd`` as it happens, in the run's own task (no channel between
        them), and return its output. For callers that watch the run another way: a server
        follows a recorded run's events in ``store.live``. ``thread_id``, ``run_id`` and
        ``tools`` as for :meth:`stream`. The run's own coroutine, to await: none of ours
        around it (every run in progress keeps each frame of its chain)."""
        return self._start(AgentInput.of(input), ctx, thread_id=thread_id, run_id=run_id,
                           sink=on_chunk, tools=tools)

    async def arun_resumed(self, run_id: str, ctx: Context = None, *,
                           on_chunk: ChunkSink) -> AgentOutput:
        """:meth:`arun` for the recorded run ``run_id``, continued from its last completed
        step (see :meth:`AgentLoopOperator.aresume_run`)."""
        return await self._resume_run(run_id, ctx, on_chunk)

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
