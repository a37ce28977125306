"""What the plain and streaming agent operators have in common: their engine and identity."""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from bloge.agent.budget import BudgetPolicy
from bloge.agent.definition import AgentDef
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.channel import chunk_channel
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.engine import AgentEngine
from bloge.agent.loop.observer import RunAttacher, RunDecider, run_store_of
from bloge.agent.loop.records import AgentInput, AgentOutput
from bloge.agent.loop.start import RunStart
from bloge.agent.loop.tools import ChunkSink
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry
from bloge.llm.tokens import TokenEstimator
from bloge.llm.types import ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision

Context = OperatorContext | Mapping[str, Any] | None
_RETUNABLE = frozenset({"max_turns", "max_tool_concurrency", "temperature"})


class AgentOperatorBase:
    """Holds the :class:`AgentEngine` of one agent; subclasses choose how a run is consumed.

    Any agent operator streams a run with :meth:`stream` (its model answer too, through the
    ``"llmStreamingChat"`` operator): the operator that answers whole runs serves streamed
    ones, without a second build of the agent.

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
        budgets: BudgetPolicy | None = None,
    ) -> None:
        self.store = store
        self._runs = None if store is None else run_store_of(store)
        self._engine = AgentEngine(ref, agent_def, registry, listeners=listeners,
                                   summarizer=summarizer, json_codec=json_codec,
                                   token_estimator=token_estimator, streaming=self.streaming,
                                   budgets=budgets)

    @property
    def ref(self) -> str:
        return self._engine.ref

    @property
    def engine(self) -> AgentEngine:
        """The engine its runs go through (what a run store drives, and what handoffs link,
        see :meth:`AgentEngine.link`)."""
        return self._engine

    @property
    def agent_def(self) -> AgentDef:
        return self._engine.definition

    @property
    def registry(self) -> OperatorRegistry:
        return self._engine.registry

    @property
    def budgets(self) -> BudgetPolicy:
        """The prices and default limits its runs are budgeted with."""
        return self._engine.budgets

    @property
    def listeners(self) -> tuple[AgentExecutionListener, ...]:
        """The listeners every run calls back, in order."""
        return tuple(self._engine.listeners.listeners)

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

    def stream(
        self, input: object, ctx: Context = None, *, thread_id: str | None = None,
        run_id: str | None = None, tools: Sequence[ToolDefinition] = (),
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The run's chunks: ``Token``, ``ToolStart`` and ``ToolEnd`` as they happen, ``Done``
        last; use ``async with contextlib.aclosing(...)`` to stop early (that cancels the
        run). ``thread_id`` and ``run_id`` as for :meth:`AgentLoopOperator.aexecute`."""
        agent_input = AgentInput.of(input)
        return self._channel(lambda sink: self._start(agent_input, ctx, thread_id=thread_id,
                                                      run_id=run_id, sink=sink, tools=tools))

    def resume_run_stream(
        self, run_id: str, ctx: Context = None
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The chunks of the recorded run ``run_id``, continued from its last completed step
        (see :meth:`AgentLoopOperator.aresume_run`)."""
        return self._channel(lambda sink: self._resume_run(run_id, ctx, sink))

    def resume_stream(
        self, checkpoint: AgentCheckpoint, input: object = None, ctx: Context = None
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        """The chunks of a run continued from ``checkpoint`` (see
        :meth:`AgentLoopOperator.aresume`)."""
        start = RunStart(None if input is None else AgentInput.of(input), checkpoint=checkpoint)
        return self._channel(lambda sink: self._engine.run(start, ctx, sink=sink))

    async def arun_child(self, input: object, ctx: Context, *, run_id: str | None,
                         sink: ChunkSink | None = None,
                         on_caller_thread: bool = False) -> AgentOutput:
        """Run ``input`` as the run ``run_id`` that a caller's tool call names (a sub-agent's,
        see :mod:`bloge.agent.subagent`), its chunks to ``sink`` when given. With a store,
        the run is taken up however far it got: its recorded output when it succeeded
        before, continued when it stopped, started when it never was — on a new thread, or
        with ``on_caller_thread`` on the recorded caller's (see
        :mod:`bloge.agent.caller_thread`). Without a store, or without ``run_id`` (an
        unrecorded caller), a run of its own."""
        agent_input = AgentInput.of(input)
        if self._runs is None:
            return await self._engine.run(RunStart(agent_input), ctx, sink=sink)
        context = _context(ctx)
        if run_id is not None and isinstance(self._runs, RunAttacher):
            return await self._runs.attach_run(self._engine, agent_input, context,
                                               run_id=run_id, sink=sink,
                                               on_caller_thread=on_caller_thread)
        return await self._runs.record_run(self._engine, agent_input, context, thread_id=None,
                                           sink=sink, metadata=None, run_id=run_id)

    def _channel(
        self, produce: Callable[[ChunkSink], Awaitable[AgentOutput]]
    ) -> AsyncGenerator[AgentStreamChunk, None]:
        return chunk_channel(produce, self._engine.definition.streaming_buffer_capacity)

    def _start(self, input: AgentInput, ctx: Context, *, thread_id: str | None,
               run_id: str | None = None, sink: ChunkSink | None = None,
               tools: Sequence[ToolDefinition] = ()) -> Coroutine[Any, Any, AgentOutput]:
        """The run to await: the engine's or the store's own coroutine, without one of ours
        around it (every concurrent run keeps each frame of its chain while it waits)."""
        if self._runs is None:
            if thread_id is not None or run_id is not None:
                raise BlogeUsageError(
                    f"agent {self.agent_def.id!r}: a thread_id or run_id needs a store to keep "
                    "the run in; build the operator with store=open_store(...)")
            return self._engine.run(RunStart(input, tools=tools), ctx, sink=sink)
        return self._runs.record_run(self._engine, input, _context(ctx), thread_id=thread_id,
                                     sink=sink, metadata=None, run_id=run_id, tools=tools)

    async def _resume_run(self, run_id: str, ctx: Context,
                          sink: ChunkSink | None = None, *,
                          decisions: Mapping[str, Decision | bool] | None = None,
                          tool_results: Mapping[str, Any] | None = None) -> AgentOutput:
        if self._runs is None:
            raise BlogeUsageError(f"agent {self.agent_def.id!r}: resuming run {run_id!r} needs "
                                  "the store it was recorded in; build the operator with "
                                  "store=open_store(...)")
        context = _context(ctx)
        if decisions or tool_results:
            if not isinstance(self._runs, RunDecider):
                raise BlogeUsageError(f"the store of agent {self.agent_def.id!r} takes no "
                                      "decisions on paused runs")
            from bloge.agent.loop.approval import decision_of  # noqa: PLC0415 -- loaded when used

            await self._runs.check_resume(self._engine, run_id, context)
            principal = context.principal
            await self._runs.decide_run(
                run_id, decisions={k: decision_of(v) for k, v in (decisions or {}).items()},
                tool_results=dict(tool_results or {}),
                principal=None if principal is None else principal.name)
        return await self._runs.resume_recorded_run(self._engine, run_id, context, sink=sink)


def _context(ctx: Context) -> OperatorContext:
    return ctx if isinstance(ctx, OperatorContext) else OperatorContext.root(ctx)
