"""``AgentLoopOperator``: an agent as an operator — input in, ``AgentOutput`` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bloge.agent.loop.base import AgentOperatorBase, Context
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.start import RunStart
from bloge.core.sync import run_sync
from bloge.llm.types import ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision


class AgentLoopOperator(AgentOperatorBase):
    """Runs the ReAct loop of ``agent_def`` with the operators of ``registry``.

    The model is reached through the ``"llmChat"`` operator; tools through the operators
    their ``tool`` blocks name. ``execute`` raises ``MaxTurnsExceededError`` (with a
    checkpoint) when the agent needs more than ``max_turns`` turns, and ``AgentRunError``
    (with a checkpoint, caused by the failure) when a run fails. A cancelled run raises the
    ``asyncio.CancelledError``, whose ``__cause__`` is an ``AgentRunError`` with exit reason
    ``"cancelled"`` and the checkpoint to resume from.
    """

    __slots__ = ()

    async def aexecute(self, input: object, ctx: Context = None, *,
                       thread_id: str | None = None, run_id: str | None = None,
                       tools: Sequence[ToolDefinition] = ()) -> AgentOutput:
        """Run the agent on ``input`` (anything ``AgentInput.of`` accepts). With a store, on
        thread ``thread_id`` (created on first use; a new one when ``None``): the agent's
        memory sees the thread's earlier messages, and the run is recorded, as ``run_id`` when
        given (a new id, else a ``StoreError``). ``tools`` are external tools of this run
        only (see :class:`~bloge.agent.runtime.RunStart`)."""
        return await self._start(AgentInput.of(input), ctx, thread_id=thread_id, run_id=run_id,
                                 tools=tools)

    def execute(self, input: object, ctx: Context = None, *,
                thread_id: str | None = None, run_id: str | None = None) -> AgentOutput:
        """The sync facade of :meth:`aexecute`."""
        return run_sync(self.aexecute(input, ctx, thread_id=thread_id, run_id=run_id),
                        method="execute")

    async def aresume_run(self, run_id: str, ctx: Context = None, *,
                          decisions: Mapping[str, Decision | bool] | None = None,
                          tool_results: Mapping[str, Any] | None = None) -> AgentOutput:
        """Continue the recorded run ``run_id`` from its last completed step: after a crash,
        a failure, a cancellation or ``MaxTurnsExceededError`` (build the operator with a
        higher ``max_turns`` for that). Tool calls whose results were recorded are not run
        again. A paused run (:class:`~bloge.agent.RunPaused`) takes ``decisions`` on its
        waiting calls (by call id: ``True``, ``False`` or a ``Decision``) and
        ``tool_results`` of its external ones first; it pauses again while any call still
        waits."""
        return await self._resume_run(run_id, ctx, decisions=decisions,
                                      tool_results=tool_results)

    def resume_run(self, run_id: str, ctx: Context = None, *,
                   decisions: Mapping[str, Decision | bool] | None = None,
                   tool_results: Mapping[str, Any] | None = None) -> AgentOutput:
        """The sync facade of :meth:`aresume_run`."""
        return run_sync(self.aresume_run(run_id, ctx, decisions=decisions,
                                         tool_results=tool_results), method="resume_run")

    async def aresume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AgentOutput:
        """Continue a run from ``checkpoint``, optionally adding new ``input`` first.

        The turn count continues from the checkpoint's, so resume with a higher
        ``max_turns`` after ``MaxTurnsExceededError``.
        """
        new = None if input is None else AgentInput.of(input)
        return await self._engine.run(RunStart(new, checkpoint=checkpoint), ctx)

    def resume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AgentOutput:
        """The sync facade of :meth:`aresume`."""
        return run_sync(self.aresume(checkpoint, input, ctx), method="resume")

