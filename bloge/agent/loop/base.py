"""What the plain and streaming agent operators have in common: their engine and identity."""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from bloge.agent.definition import AgentDef
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.engine import AgentEngine
from bloge.agent.loop.observer import run_store_of
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.tools import ChunkSink
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry
from bloge.llm.tokens import TokenEstimator

Context = OperatorContext | Mapping[str, Any] | None
_RETUNABLE = frozenset({"max_turns", "max_tool_concurrency", "temperature"})


class AgentOperatorBase:
    """Holds the :class:`AgentEngine` of one agent; subclasses choose how a run is consumed.

    With a ``store`` (:func:`bloge.store.open_store`, or any
    :class:`~bloge.agent.loop.observer.RunStore`), every run is recorded: it gets a
    ``run_id``, runs on a thread (``thread_id``, or a new one), and can be resumed by its id
    after a failure or a crash.
    """

    __slots__ = ("_engine", "_runs", "store")
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
        store: object | None = None,
    ) -> None:
        self.store = store
        self._runs = None if store is None else run_store_of(store)
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

    def retune(self, **changes: Any) -> None:
        """Change the agent's definition for what follows, without a new operator: a run
        reads ``max_turns`` and ``max_tool_concurrency`` when it starts, and ``temperature``
        at each turn (so a run going on sees a new temperature from its next turn). Only
        those three; the values are checked as the DSL's are."""
        unknown = set(changes) - _RETUNABLE
        if unknown:
            raise BlogeUsageError(f"agent {self.agent_def.id!r}: only "
                                  f"{', '.join(sorted(_RETUNABLE))} can be retuned, not "
                                  f"{', '.join(sorted(unknown))}")
        # One attribute store: a run reads the definition it finds, old or new, never a mix.
        self._engine.definition = replace(self._engine.definition, **changes)

    def _start(self, input: AgentInput, ctx: Context, *, thread_id: str | None,
               run_id: str | None = None,
               sink: ChunkSink | None = None) -> Coroutine[Any, Any, AgentOutput]:
        """The run to await: the engine's or the store's own coroutine, without one of ours
        around it (every concurrent run keeps each frame of its chain while it waits)."""
        if self._runs is None:
            if thread_id is not None or run_id is not None:
                raise BlogeUsageError(
                    f"agent {self.agent_def.id!r}: a thread_id or run_id needs a store to keep "
                    "the run in; build the operator with store=open_store(...)")
            return self._engine.run(input, ctx, sink=sink)
        return self._runs.record_run(self._engine, input, _context(ctx), thread_id=thread_id,
                                     sink=sink, metadata=None, run_id=run_id)

    async def _resume_run(self, run_id: str, ctx: Context,
                          sink: ChunkSink | None = None) -> AgentOutput:
        if self._runs is None:
            raise BlogeUsageError(f"agent {self.agent_def.id!r}: resuming run {run_id!r} needs "
                                  "the store it was recorded in; build the operator with "
                                  "store=open_store(...)")
        return await self._runs.resume_recorded_run(self._engine, run_id, _context(ctx),
                                                    sink=sink)


def _context(ctx: Context) -> OperatorContext:
    return ctx if isinstance(ctx, OperatorContext) else OperatorContext.root(ctx)
