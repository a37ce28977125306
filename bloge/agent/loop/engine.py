"""The ReAct loop, shared by ``AgentLoopOperator`` and ``StreamingAgentLoopOperator``.

:class:`AgentEngine` holds what does not change between runs; each run gets an
:class:`~bloge.agent.loop.execution.Execution` with its memory, transcript and counters, which
walks the steps of :mod:`.steps` until it finishes, runs out of turns, pauses, fails or is
cancelled. :class:`ToolRound` and :class:`RunEffects` are where a durable runner plugs in.
"""

from __future__ import annotations

from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from typing import Any, Protocol

from bloge.agent.budget import DEFAULT_POLICY, BudgetPolicy
from bloge.agent.definition import AgentDef
from bloge.agent.listeners import (
    AgentExecutionListener,
    HandoffPayload,
    ListenerChain,
)
from bloge.agent.loop.budget import BudgetCounters
from bloge.agent.loop.execution import Execution
from bloge.agent.loop.guards import AgentGuards
from bloge.agent.loop.observer import RecordedResult, RunObserver
from bloge.agent.loop.records import AgentOutput
from bloge.agent.loop.start import Opening, RunStart, opening
from bloge.agent.loop.tools import ChunkSink, ToolOutcome
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.operator import BoundOperator
from bloge.core.registry import OperatorRegistry
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.operators import LLM_CHAT, LLM_STREAMING_CHAT
from bloge.llm.tokens import DEFAULT_TOKEN_ESTIMATOR, TokenEstimator
from bloge.llm.types import LlmRequest, ToolDefinition

ModelCall = Callable[[LlmRequest, int], Awaitable[object]]


class ToolRound(Protocol):
    """Runs one turn's tool calls; :class:`~bloge.agent.loop.tools.ToolDispatcher` is one."""

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        """The outcomes of ``calls``, in the model's order."""
        ...


class RunEffects(Protocol):
    """Where a run's I/O happens, when not here: its model calls and its tool rounds (a
    durable runner performs them elsewhere, e.g. as Temporal activities). The decisions
    between them stay the engine's."""

    @property
    def call_model(self) -> ModelCall | None:
        """``await call_model(request, turn)``: the model's answer in turn ``turn``; ``None``
        leaves the model calls to the engine's chat operator (effects that only replace the
        tool rounds, such as an eval's replayed tools)."""
        ...

    @property
    def tools(self) -> ToolRound:
        """Runs the tool rounds."""
        ...

    async def handed_to(self, handoff: HandoffPayload) -> RunEffects:
        """The effects the run goes on with once it hands over to ``handoff.to_agent`` (the
        handoff told where the run's I/O happens, when that is where it is recorded)."""
        ...


class AgentEngine:
    """Everything a run of one agent needs that does not change from run to run."""

    __slots__ = ("budgets", "codec", "definition",
                 "exit_needs_messages", "guards", "handoffs", "linked", "listeners", "may_wait",
                 "output_request", "ref", "registry", "streaming", "summarizer",
                 "token_estimator", "tool_definitions", "tools_by_name")

    def __init__(
        self,
        ref: str,
        definition: AgentDef,
        registry: OperatorRegistry,
        *,
        listeners: Sequence[AgentExecutionListener] = (),
        summarizer: ConversationMemory.Summarizer | None = None,
        json_codec: JsonCodec | None = None,
        token_estimator: TokenEstimator | None = None,
        streaming: bool = False,
        budgets: BudgetPolicy | None = None,
    ) -> None:
        if not isinstance(definition, AgentDef):
            raise BlogeUsageError(f"an agent operator needs an AgentDef, got {definition!r}")
        if not isinstance(registry, OperatorRegistry):
            raise BlogeUsageError(f"an agent operator needs an OperatorRegistry, got {registry!r}")
        self.ref = ref
        self.definition = definition
        self.registry = registry
        self.listeners = ListenerChain(listeners)
        self.summarizer = summarizer
        self.codec = json_codec or DEFAULT_CODEC
        self.token_estimator = token_estimator or DEFAULT_TOKEN_ESTIMATOR
        self.streaming = streaming
        self.budgets = budgets or DEFAULT_POLICY
        self.tool_definitions = (*(tool.tool_definition for tool in definition.tools),
                                 *(handoff.tool_definition for handoff in definition.handoffs))
        #: The handoffs by the name of their tool.
        self.handoffs = {handoff.tool_name: handoff for handoff in definition.handoffs}
        #: The engines of the agents the handoffs go to, by agent id (see :meth:`link`).
        self.linked: dict[str, AgentEngine] = {}
        self.tools_by_name = {tool.name: tool for tool in definition.tools}
        #: Whether a call of a round may wait (for approval, or for an external result).
        self.may_wait = any(tool.requires_approval is not False or tool.external
                            for tool in definition.tools)
        condition = definition.exit_condition
        self.exit_needs_messages = condition is not None and "messages" in condition.variables
        self.output_request = None if definition.output is None else definition.output.request()
        self.guards = AgentGuards.of(definition.guards, registry)

    def link(self, engines: Mapping[str, AgentEngine]) -> None:
        """Give the handoffs their agents: the engines of the agents they go to, by agent id
        (more may be given; the ones no handoff names are left out). A run of an agent whose
        handoff has no engine raises :class:`~bloge.core.errors.BlogeUsageError`."""
        wanted = {handoff.agent_id for handoff in self.definition.handoffs}
        self.linked.update({agent_id: engine for agent_id, engine in engines.items()
                            if agent_id in wanted})

    def link_all(self, definitions: Mapping[str, AgentDef],
                 build: Callable[[AgentDef], AgentEngine], *,
                 given: Callable[[AgentDef], AgentDef] | None = None) -> None:
        """Link this engine's handoffs, and those of the agents they reach at any distance,
        to engines ``build`` makes of ``definitions`` (by agent id; each agent once, this one
        being itself). A handoff already linked keeps its engine; one to an agent
        ``definitions`` lacks stays unlinked (a run raises, naming it).

        ``given`` makes an agent's definition into the run's, with what the run was given in
        place of its agent's own (a command's ``--max-turns`` and ``--budget``, a request's
        ``max_turns``, budget and sampling): every agent built here gets it too, since they
        go on with the same run (one resumed with a higher cap or limit after the agent it
        handed over to ran out of them goes on)."""
        engines: dict[str, AgentEngine] = {self.definition.id: self}
        queue = [self]
        while queue:
            engine = queue.pop()
            for handoff in engine.definition.handoffs:
                target = engines.get(handoff.agent_id) or engine.linked.get(handoff.agent_id)
                definition = definitions.get(handoff.agent_id)
                if target is None and definition is not None:
                    target = build(definition if given is None else given(definition))
                if target is not None and handoff.agent_id not in engines:
                    engines[handoff.agent_id] = target
                    queue.append(target)
            engine.link({k: v for k, v in engines.items() if k not in engine.linked})

    def reached(self) -> list[AgentEngine]:
        """This engine and those its handoffs reach (linked, see :meth:`link`), at any
        distance: each agent once, this one first, then in the order they are found."""
        seen: dict[str, AgentEngine] = {self.definition.id: self}
        queue = [self]
        while queue:
            for other in queue.pop().linked.values():
                if other.definition.id not in seen:
                    seen[other.definition.id] = other
                    queue.append(other)
        return list(seen.values())

    def find(self, agent_id: str) -> AgentEngine | None:
        """The engine of ``agent_id`` among this one and those its handoffs reach, at any
        distance (:meth:`reached`): the agent a run handed over to, which its resume
        continues with."""
        return next((engine for engine in self.reached() if engine.definition.id == agent_id),
                    None)

    def handed_to(self, agent_id: str) -> AgentEngine:
        """The engine a handoff of this agent to ``agent_id`` continues with."""
        engine = self.linked.get(agent_id)
        if engine is None:
            raise BlogeUsageError(
                f"agent {self.definition.id!r} hands over to agent {agent_id!r}, which it "
                "was not linked to: build it with Agent(…, handoffs=[…]), or load both from "
                "bloge.agents.dsl-locations")
        return engine

    def run(
        self,
        start: RunStart,
        ctx: OperatorContext | Mapping[str, Any] | None,
        *,
        sink: ChunkSink | None = None,
        observer: RunObserver | None = None,
        effects: RunEffects | None = None,
        counters: BudgetCounters | None = None,
    ) -> Coroutine[Any, Any, AgentOutput]:
        """One run from ``start``: set up now (a missing operator raises here, as does a
        checkpoint of another agent), awaited for its output.

        ``sink`` is awaited with each ``Token``, ``ToolStart`` and ``ToolEnd``: a run with a
        sink calls the model through ``llmStreamingChat``, as every run of a ``streaming``
        engine does. ``observer`` records the run (see
        :class:`~bloge.agent.loop.observer.RunObserver`); ``effects`` performs its model calls
        and tool rounds instead of the chat operator and a :class:`ToolDispatcher`;
        ``counters`` keep the budgets shared beyond this run (its thread's, its API key's).
        """
        if not isinstance(start, RunStart):
            raise BlogeUsageError(f"AgentEngine.run() starts from a RunStart, got {start!r}")
        # None first: OperatorContext is a Mapping, and an isinstance check of an ABC is a
        # Python call.
        context = (OperatorContext.root() if ctx is None
                   else ctx if isinstance(ctx, OperatorContext) else OperatorContext.root(ctx))
        engine = self
        checkpoint = start.checkpoint
        if checkpoint is not None and checkpoint.agent_id not in (None, self.definition.id):
            # A run that handed over resumes with the agent it handed over to.
            engine = self.find(checkpoint.agent_id) or self
        begun = opening(start, engine.definition)
        # The run's own coroutine, without one of ours around it: every concurrent run keeps
        # each frame of its chain while it waits.
        execution = engine.execution(context, begun, sink=sink, observer=observer,
                                     effects=effects, tools=tuple(start.tools),
                                     counters=counters)
        pending = start.pending
        if pending is None and checkpoint is not None:
            pending = execution.stopped_round()
        return execution.execute(pending)

    def execution(self, ctx: OperatorContext, begun: Opening, *, sink: ChunkSink | None,
                  observer: RunObserver | None, effects: RunEffects | None,
                  tools: tuple[ToolDefinition, ...], counters: BudgetCounters | None,
                  transcript: list[LlmMessage] | None = None) -> Execution:
        """A run of this agent from ``begun`` (see :meth:`run`); ``transcript``: the list the
        run appends to, when it goes on from another agent's (a handoff). A missing operator
        raises here."""
        # A run with a sink streams the model's answer to it, whichever the engine's default.
        chat = self._chat_operator(streamed=self.streaming or sink is not None)
        registry = self.registry
        for tool in self.definition.tools:
            # The error's wording is built only then.
            if not tool.external and tool.operator_ref not in registry:
                registry.bound(tool.operator_ref, purpose=f"operator for tool {tool.name!r}")
        for handoff in self.definition.handoffs:
            self.handed_to(handoff.agent_id)
        own = _own_tools(tools, self.definition) if tools else ()
        return Execution(self, ctx, begun, chat, sink, observer, effects, own, counters,
                         transcript=transcript)

    def _chat_operator(self, *, streamed: bool) -> BoundOperator:
        name = LLM_STREAMING_CHAT if streamed else LLM_CHAT
        purpose = "streaming chat operator" if streamed else "chat operator"
        return self.registry.bound(name, purpose=purpose)


def _own_tools(tools: Sequence[ToolDefinition],
               definition: AgentDef) -> tuple[ToolDefinition, ...]:
    """The run's own tools the agent does not offer itself. One named like an external tool
    of the agent's is that tool (a run continued by a client that offers its tools again:
    ``/v1``); one named like any other tool of the agent's (or a handoff's), or repeated,
    raises."""
    external = {tool.name for tool in definition.tools if tool.external}
    taken = ({tool.name for tool in definition.tools} - external) | {
        handoff.tool_name for handoff in definition.handoffs}
    own: list[ToolDefinition] = []
    for tool in tools:
        if tool.name in taken:
            raise BlogeUsageError(f"the run's tool {tool.name!r} has the name of another tool "
                                  f"of agent {definition.id!r}")
        taken.add(tool.name)
        if tool.name not in external:
            own.append(tool)
    return tuple(own)
