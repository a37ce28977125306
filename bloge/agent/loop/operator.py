"""``AgentLoopOperator``: an agent as an operator — input in, ``AgentOutput`` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.agent.definition import AgentDef
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.engine import AgentEngine
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.sync import run_sync
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.registry import OperatorRegistry
from bloge.llm.tokens import TokenEstimator

Context = OperatorContext | Mapping[str, Any] | None


class AgentLoopOperator:
    """Runs the ReAct loop of ``agent_def`` with the operators of ``registry``.

    The model is reached through the ``"llmChat"`` operator; tools through the operators
    their ``tool`` blocks name. ``execute`` raises ``MaxTurnsExceededError`` (with a
    checkpoint) when the agent needs more than ``max_turns`` turns, and ``AgentRunError``
    (with a checkpoint, caused by the failure) when a run fails.
    """

    __slots__ = ("_engine",)

    def __init__(
        self,
        ref: str,
        agent_def: AgentDef,
        registry: OperatorRegistry,
        *,
        listeners: Sequence[AgentExecutionListener] = (),
        summarizer: ConversationMemory.Summarizer | None = None,
        json_codec: JsonCodec | None = None,
        token_estimator: TokenEstimator | None = None,
    ) -> None:
        self._engine = AgentEngine(ref, agent_def, registry, listeners=listeners,
                                   summarizer=summarizer, json_codec=json_codec,
                                   token_estimator=token_estimator)

    @property
    def ref(self) -> str:
        return self._engine.ref

    @property
    def agent_def(self) -> AgentDef:
        return self._engine.definition

    @property
    def registry(self) -> OperatorRegistry:
        return self._engine.registry

    async def aexecute(self, input: object, ctx: Context = None) -> AgentOutput:
        """Run the agent on ``input`` (anything ``AgentInput.of`` accepts)."""
        return await self._engine.run(AgentInput.of(input), ctx)

    def execute(self, input: object, ctx: Context = None) -> AgentOutput:
        """The sync facade of :meth:`aexecute`."""
        return run_sync(self.aexecute(input, ctx), method="execute")

    async def aresume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AgentOutput:
        """Continue a run from ``checkpoint``, optionally adding new ``input`` first.

        The turn count continues from the checkpoint's, so resume with a higher
        ``max_turns`` after ``MaxTurnsExceededError``.
        """
        new = None if input is None else AgentInput.of(input)
        return await self._engine.run(new, ctx, checkpoint=checkpoint)

    def resume(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AgentOutput:
        """The sync facade of :meth:`aresume`."""
        return run_sync(self.aresume(checkpoint, input, ctx), method="resume")

    def __repr__(self) -> str:
        return f"AgentLoopOperator({self.ref!r}, agent={self.agent_def.id!r})"
