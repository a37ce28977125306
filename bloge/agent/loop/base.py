"""What the plain and streaming agent operators have in common: their engine and identity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from bloge.agent.definition import AgentDef
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.engine import AgentEngine
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.registry import OperatorRegistry
from bloge.llm.tokens import TokenEstimator

Context = OperatorContext | Mapping[str, Any] | None


class AgentOperatorBase:
    """Holds the :class:`AgentEngine` of one agent; subclasses choose how a run is consumed."""

    __slots__ = ("_engine",)
    streaming: ClassVar[bool] = False

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
                                   token_estimator=token_estimator, streaming=self.streaming)

    @property
    def ref(self) -> str:
        return self._engine.ref

    @property
    def agent_def(self) -> AgentDef:
        return self._engine.definition

    @property
    def registry(self) -> OperatorRegistry:
        return self._engine.registry

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.ref!r}, agent={self.agent_def.id!r})"
