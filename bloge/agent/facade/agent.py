"""``Agent``: the runtime chapter's one-line agent, a thin front of ``AgentLoopOperator``."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bloge.agent.agent_calls import QUESTION_PARAMETERS
from bloge.agent.budget import Budget, BudgetPolicy
from bloge.agent.builder import AgentBuilder
from bloge.agent.caller_context import SubAgentContext
from bloge.agent.caller_thread import SubAgentThread
from bloge.agent.definition import AgentDef, AgentToolRef
from bloge.agent.facade.handler import DEFAULT_MAX_BODY_BYTES, AgentHandler
from bloge.agent.facade.model import ChatFunction, ChatModel, as_provider
from bloge.agent.facade.sync_stream import iterate_sync
from bloge.agent.facade.tools import TOOL_NAME, Tool, ToolLike, ToolOperator, tool_operator
from bloge.agent.guards.model import GuardDef
from bloge.agent.handoffs import tool_name_of
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.errors import MaxTurnsExceededError
from bloge.agent.loop.operator import AgentLoopOperator
from bloge.agent.loop.records import AgentOutput
from bloge.agent.memory.summary import LlmSummarizer
from bloge.agent.subagent import DEFAULT_MAX_DESCENDANT_TOOL_CALLS, SubAgentTool
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry
from bloge.core.sync import run_sync
from bloge.llm.breaker import CircuitBreaker
from bloge.llm.operators import (
    LLM_CHAT,
    LLM_STREAMING_CHAT,
    LlmChatOperator,
    LlmStreamingChatOperator,
)
from bloge.llm.provider import LlmProvider
from bloge.llm.types import ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision

#: What :meth:`Agent.run` returns when ``max_turns`` turns brought no text answer (the
#: chapter's exact words).
MAX_TURNS_REACHED = "[ace-agent] max turns reached"
#: The model name of the requests when neither ``model=`` nor the provider names one.
DEFAULT_MODEL = "default"


class Agent:
    """A model, its tools and a turn cap: ``Agent(llm, tools).run("…")`` returns the answer.

    ``llm`` is any bloge :class:`~bloge.llm.LlmProvider` (``OpenAIChatProvider``,
    ``AnthropicProvider``, ``ClaudeProvider``, ``OfflineProvider``, ``ScriptedProvider`` …),
    or the chapter's model: an object whose ``chat(messages, tools)`` returns the text or a
    :class:`~bloge.agent.facade.ToolUse`, or such a function (see
    :class:`~bloge.agent.facade.ChatModel`). ``tools`` are :class:`~bloge.agent.facade.Tool`
    objects or plain typed functions. ``model`` names the model in each request (default: the
    provider's ``model`` attribute, as ``ClaudeProvider`` has; pass it for
    ``OpenAIChatProvider``), or lists models to try in order (``["gpt-4o",
    "claude-sonnet-4-5"]``: the next one answers when a call fails over, see
    :mod:`bloge.llm.fallback`); ``system_prompt`` starts every conversation; ``max_tokens``
    bounds each answer of the model; ``tool_choice`` (``"auto"``, ``"required"``, ``"none"``
    or a tool's name) says whether it must call a tool; ``listeners`` see every callback of
    the loop, as with any agent operator. ``output_type`` (a pydantic model, a dataclass, a
    TypedDict) types the result: the run ends with an answer that validates, and
    ``run_output(…).output`` is the instance (``run`` returns its JSON text). ``guards``
    check the input, the answer and each tool call (``input_guard(fn)``,
    ``output_guard(PiiGuard(), action="reject")``, ``tool_call_guard(when='tool_name ==
    "refund"')``; see :mod:`bloge.agent.guards`). ``budget`` limits what each run may spend (a
    :class:`~bloge.agent.Budget` or its limits, ``{"usd": 0.5, "tool_calls": 40}``): running
    out raises :class:`~bloge.BudgetExceededError`; ``budgets`` (a
    :class:`~bloge.agent.BudgetPolicy`) gives other prices and defaults.

    Each run is a new conversation, and runs are independent: one ``Agent`` may serve many
    users at once. With a ``store`` (``bloge.store.open_store(…)``) every run is recorded, and
    a run given a ``thread_id`` continues that thread's conversation, from this process or a
    later one. The loop is the one of :class:`~bloge.agent.AgentLoopOperator` (it is
    :attr:`operator`): a text answer ends the run; a tool use runs the named tool and feeds
    its result back; an unknown tool, arguments that do not fit and a failing tool feed an
    error text back for the model to correct. That one operator serves whole runs
    (:meth:`run`), streamed ones (:meth:`stream`) and resumed ones (:meth:`resume`).
    :meth:`from_dsl` makes an ``Agent`` of an ``agent { … }`` definition.
    """

    __slots__ = ("_operator", "handoff_description")

    def __init__(
        self,
        llm: LlmProvider | ChatModel | ChatFunction,
        tools: Sequence[ToolLike | ToolDefinition] = (),
        *,
        max_turns: int = 8,
        model: str | Sequence[str] | None = None,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
        tool_choice: str | None = None,
        name: str = "agent",
        listeners: Sequence[AgentExecutionListener] = (),
        store: object | None = None,
        output_type: Any = None,
        guards: Sequence[GuardDef] = (),
        budget: Budget | Mapping[str, Any] | None = None,
        budgets: BudgetPolicy | None = None,
        handoffs: Sequence[Agent] = (),
        handoff_description: str = "",
    ) -> None:
        if isinstance(tools, Tool) or callable(tools):
            raise BlogeUsageError(f"an Agent's tools are a list: Agent(llm, [{tools!r}])")
        registry = _with_chat(OperatorRegistry(), llm)
        models = ((model,) if isinstance(model, str) else tuple(model) if model is not None
                  else (_model_of(llm),))
        if not models:
            raise BlogeUsageError(f"agent {name!r}: model= lists no model")
        builder = (AgentBuilder.create(name, registry=registry)
                   .model(*models)
                   .max_turns(max_turns)
                   .system_prompt(system_prompt)
                   .max_tokens(max_tokens)
                   .tool_choice(tool_choice)
                   .output(output_type)
                   .guard(*guards))
        if budget is not None:
            builder.budget(budget)
        #: What the model of an agent handing over to this one is told of it.
        self.handoff_description = handoff_description
        for other in _agents(handoffs, name):
            builder.handoff(tool_name_of(other.name), other.name,
                            description=other.handoff_description)
        for tool in tools:
            if isinstance(tool, ToolDefinition):  # answered from outside
                builder.tool(AgentToolRef.external_tool(
                    tool.name, description=tool.description, parameters=tool.parameters))
                continue
            made = tool_operator(tool)
            ref = f"tool:{made.name}"
            if ref in registry:
                raise BlogeUsageError(f"agent {name!r} has two tools named {made.name!r}")
            registry.register(ref, made.operator)
            builder.tool(AgentToolRef.of(made.name, ref, description=made.description,
                                         parameters=made.parameters,
                                         requires_approval=getattr(tool, "requires_approval",
                                                                   False)))
        self._operator = AgentLoopOperator(name, builder.build(), registry,
                                           listeners=listeners, store=store, budgets=budgets)
        self._operator.engine.link({other.name: other.operator.engine for other in handoffs})

    @classmethod
    def from_dsl(
        cls,
        source: str | os.PathLike[str],
        *,
        llm: LlmProvider | ChatModel | ChatFunction,
        tools: Sequence[ToolLike] = (),
        listeners: Sequence[AgentExecutionListener] = (),
        store: object | None = None,
        output_types: Sequence[type] = (),
        agents: Sequence[Agent] = (),
    ) -> Agent:
        """The agent an ``agent { … }`` definition declares, its tools bound to ``tools``.

        ``source`` is the DSL text (a ``str`` holding a ``{``) or the path of a ``.bloge``
        file declaring one agent. Each ``tool <name> : <tool> { … }`` block runs the Python
        tool named ``<tool>`` (a :class:`~bloge.agent.facade.Tool`'s ``name``, a function's
        ``__name__``); a block without ``description`` takes the tool's, and one without
        ``input`` passes the model's arguments whole and shows the tool's schema. A block
        naming a tool not in ``tools`` is a :class:`~bloge.CompileError` at the block's
        ``file:line``; a tool no block names is a :class:`~bloge.BlogeUsageError`. The model,
        turn cap, prompt, memory (``summary(n)`` summarizes with the agent's model) and exit
        condition are the definition's; ``llm``, ``listeners`` and ``store`` as for
        :class:`Agent`. ``output_types`` are the types
        (pydantic models, dataclasses, TypedDicts) ``output = <Name>`` may name, by class name.
        ``agents`` are the agents a ``tool <name> : agent <agentName> { … }`` block may ask,
        by their ``name``: each call runs that agent as a sub-agent (see :meth:`as_tool`);
        and those a ``handoff <name> : agent <agentName> { … }`` block hands the
        conversation over to (as ``Agent(…, handoffs=[…])`` does). A block naming none of
        them, or agents asking each other in a cycle, is a :class:`~bloge.CompileError` at
        the name in the block.
        """
        from bloge.agent.facade.dsl import compile_agent  # noqa: PLC0415 -- loads the DSL compiler when used

        registry = OperatorRegistry()
        named = {agent.operator.agent_def.id: agent.operator for agent in agents}
        definition = compile_agent(source, registry, tools, output_types, named)
        # The model's operators join after the compilation: a tool block may not name them.
        agent = cls._of(definition, _with_chat(registry, llm), listeners=listeners, store=store)
        agent.operator.engine.link({name: operator.engine for name, operator in named.items()})
        return agent

    @classmethod
    def _of(cls, definition: AgentDef, registry: OperatorRegistry, *,
            listeners: Sequence[AgentExecutionListener],
            store: object | None) -> Agent:
        agent = cls.__new__(cls)
        # A summary(n) memory summarizes with the agent's model, as a deployed agent's does.
        summarizer = LlmSummarizer.of_agent(definition.memory_strategy, registry,
                                            definition.model)
        agent._operator = AgentLoopOperator(  # noqa: SLF001 -- the class builds its own
            definition.id, definition, registry, listeners=listeners, store=store,
            summarizer=summarizer)
        agent.handoff_description = ""
        return agent

    @property
    def name(self) -> str:
        """The agent's id (``name=``): what its runs, callbacks and handoffs name it."""
        return self._operator.agent_def.id

    @property
    def operator(self) -> AgentLoopOperator:
        """The :class:`~bloge.agent.AgentLoopOperator` that runs this agent."""
        return self._operator

    def run(self, input: str, *, thread_id: str | None = None) -> str:
        """The answer to ``input``; ``MAX_TURNS_REACHED`` (``"[ace-agent] max turns
        reached"``) when ``max_turns`` turns brought no text answer.

        Any number of times, from any thread; inside a running event loop, await
        :meth:`arun` instead. A failed run (the provider failed after its retries, say)
        raises :class:`~bloge.agent.AgentRunError`. ``thread_id`` (with a ``store``) is the
        conversation to continue, created on first use.
        """
        return run_sync(self.arun(input, thread_id=thread_id), method="run")

    async def arun(self, input: str, *, thread_id: str | None = None) -> str:
        """:meth:`run`, awaited."""
        try:
            output = await self.arun_output(input, thread_id=thread_id)
        except MaxTurnsExceededError:
            return MAX_TURNS_REACHED
        return output.content

    def run_output(self, input: str, *, thread_id: str | None = None) -> AgentOutput:
        """The whole :class:`~bloge.agent.AgentOutput` of a run on ``input`` (transcript,
        tool results, usage, checkpoint). As with ``AgentLoopOperator.execute``, running out
        of turns raises :class:`~bloge.agent.MaxTurnsExceededError`, whose ``checkpoint``
        resumes the run (:meth:`resume`)."""
        return run_sync(self.arun_output(input, thread_id=thread_id), method="run_output")

    async def arun_output(self, input: str, *, thread_id: str | None = None) -> AgentOutput:
        """:meth:`run_output`, awaited."""
        return await self._operator.aexecute(input, thread_id=thread_id)

    def stream(self, input: str, *, thread_id: str | None = None
               ) -> Iterator[AgentStreamChunk]:
        """The run on ``input`` as it happens: :class:`~bloge.Token` chunks of the answer,
        :class:`~bloge.ToolStart` and :class:`~bloge.ToolEnd` around each tool call,
        :class:`~bloge.Partial` chunks (the fields parsed so far) with an ``output_type``, and
        :class:`~bloge.Done` last, whose ``final_output`` is the run's
        :class:`~bloge.AgentOutput`.

        >>> for chunk in agent.stream("Hello"):
        ...     if isinstance(chunk, Token):
        ...         print(chunk.text, end="")

        Leaving the loop early (``break``) cancels the run. Any number of times, from any
        thread; inside a running event loop, iterate :meth:`astream` instead. Running out of
        turns raises :class:`~bloge.MaxTurnsExceededError` (with its checkpoint), a failed
        run :class:`~bloge.AgentRunError`, after the chunks that came before. ``thread_id``
        as for :meth:`run`.
        """
        return iterate_sync(self.astream(input, thread_id=thread_id), method="stream")

    def astream(self, input: str, *, thread_id: str | None = None
                ) -> AsyncGenerator[AgentStreamChunk, None]:
        """:meth:`stream`, for ``async for``; ``contextlib.aclosing(…)`` stops it early."""
        return self._operator.stream(input, thread_id=thread_id)

    def resume(self, run: str | AgentCheckpoint, *, input: str | None = None,
               decisions: Mapping[str, Decision | bool] | None = None,
               tool_results: Mapping[str, Any] | None = None) -> AgentOutput:
        """Continue a run that did not finish, and return its :class:`~bloge.AgentOutput`.

        ``run`` is either the ``run_id`` of a run recorded in this agent's ``store`` (after a
        failure, a crash or a cancellation: its recorded steps are not done again), or,
        with or without a store, an :class:`~bloge.AgentCheckpoint` — the ``checkpoint`` of
        a :class:`~bloge.MaxTurnsExceededError` or an :class:`~bloge.AgentRunError` — which
        ``input``, when given, follows as a new user message. The turn count goes on from
        the run's: after ``MaxTurnsExceededError`` raise the cap first
        (``agent.operator.retune(max_turns=…)``). Errors as for :meth:`run_output`.

        A run that paused (:class:`~bloge.RunPaused`: calls waiting for approval, or for the
        results of external tools) resumes by its id with ``decisions`` (call id → ``True``,
        ``False`` or a ``Decision`` with its reason) and ``tool_results`` (call id →
        result); it pauses again while any call still waits. Its ``checkpoint`` alone takes
        no decisions: resumed from it, the run pauses again with the same waiting calls.

        >>> try:
        ...     output = agent.run_output("Plan the trip")
        ... except MaxTurnsExceededError as error:
        ...     agent.operator.retune(max_turns=20)
        ...     output = agent.resume(error.checkpoint)
        """
        return run_sync(self.aresume(run, input=input, decisions=decisions,
                                     tool_results=tool_results), method="resume")

    async def aresume(self, run: str | AgentCheckpoint, *,
                      input: str | None = None,
                      decisions: Mapping[str, Decision | bool] | None = None,
                      tool_results: Mapping[str, Any] | None = None) -> AgentOutput:
        """:meth:`resume`, awaited."""
        if isinstance(run, AgentCheckpoint):
            return await self._operator.aresume(run, input)
        if not isinstance(run, str):
            raise BlogeUsageError(f"resume() takes a run id or an AgentCheckpoint, "
                                  f"got {type(run).__name__}")
        if input is not None:
            raise BlogeUsageError("a recorded run resumes where it stopped, without new "
                                  "input; continue its thread with run(input, thread_id=…)")
        return await self._operator.aresume_run(run, decisions=decisions,
                                                tool_results=tool_results)

    def as_tool(self, name: str | None = None, *, description: str = "",
                max_descendant_tool_calls: int | None = DEFAULT_MAX_DESCENDANT_TOOL_CALLS,
                context: SubAgentContext = "fresh",
                thread: SubAgentThread = "fresh") -> ToolOperator:
        """This agent as a tool of another: ``Agent(llm, [researcher.as_tool()])``.

        A call asks this agent its ``input`` argument and answers with its answer (its typed
        output's JSON data with an ``output_type``), with this agent's own ``max_turns`` and
        budget; its failure is the call's error, which the caller's model sees. With a
        ``store`` here and a recorded caller, each call is a run of its own, a child of the
        caller's run (``parent_run_id``), which a resumed caller takes up instead of running
        again. ``name`` is the tool's (default: this agent's name); ``description`` what the
        caller's model reads of it; ``max_descendant_tool_calls`` caps the tool calls of the
        caller's sub-agents, all the way down (see :mod:`bloge.agent.subagent`).
        ``context`` is what each call's run starts from: ``"fresh"``, the question alone;
        ``"parent"``, the caller's conversation so far, then the question (see
        :mod:`bloge.agent.caller_context`). ``thread`` is where each call's run is recorded:
        ``"fresh"``, on a thread of its own; ``"parent"``, on its recorded caller's thread,
        its messages tagged with its run id, the caller's memory left as it is (see
        :mod:`bloge.agent.caller_thread`).
        """
        agent_id = self._operator.agent_def.id
        if name is None and not TOOL_NAME.fullmatch(agent_id):
            raise BlogeUsageError(f"agent {agent_id!r} is no tool name (1 to 64 letters, "
                                  "digits, '_' or '-'): give one, as_tool('research')")
        operator = SubAgentTool(self._operator, description=description, context=context,
                                thread=thread,
                                max_descendant_tool_calls=max_descendant_tool_calls)
        return ToolOperator(name or agent_id,
                            description or f"Ask agent {self._operator.agent_def.id!r}",
                            dict(QUESTION_PARAMETERS), operator)

    def as_handler(self, *, path: str | None = None,
                   max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> AgentHandler:
        """An ASGI application answering each request with :meth:`arun`: the input is the
        request body, else the ``q`` query parameter; the answer is ``text/plain``. See
        :class:`~bloge.agent.facade.AgentHandler` (``path``, ``max_body_bytes``, statuses).

        >>> uvicorn.run(agent.as_handler(path="/chat"), host="127.0.0.1", port=8080)
        """
        return AgentHandler(self.arun, path=path, max_body_bytes=max_body_bytes)

    def __repr__(self) -> str:
        definition = self._operator.agent_def
        return (f"Agent({definition.id!r}, model={definition.model!r}, "
                f"tools={[tool.name for tool in definition.tools]!r})")


def _agents(handoffs: Sequence[Agent], name: str) -> Sequence[Agent]:
    """``handoffs``, checked: agents, each once, none named ``name`` (the agent's own)."""
    if isinstance(handoffs, Agent):
        raise BlogeUsageError(f"an Agent's handoffs are a list: Agent(…, handoffs=[{handoffs!r}])")
    names: set[str] = set()
    for other in handoffs:
        if not isinstance(other, Agent):
            raise BlogeUsageError(f"agent {name!r}: handoffs= takes Agent objects, got "
                                  f"{type(other).__name__}")
        if other.name == name or other.name in names:
            raise BlogeUsageError(f"agent {name!r}: its handoffs need agents of names of their "
                                  f"own (Agent(…, name=…)); {other.name!r} is taken")
        names.add(other.name)
    return handoffs


def _with_chat(registry: OperatorRegistry,
               llm: LlmProvider | ChatModel | ChatFunction) -> OperatorRegistry:
    """``registry`` with the model's chat operators, whole and streamed."""
    provider = as_provider(llm)
    breaker = CircuitBreaker()  # one per agent, for its whole and its streamed calls
    return (registry.register(LLM_CHAT, LlmChatOperator(provider, breaker=breaker))
            .register(LLM_STREAMING_CHAT, LlmStreamingChatOperator(provider, breaker=breaker)))


def _model_of(llm: object) -> str:
    model = getattr(llm, "model", None)
    return model if isinstance(model, str) and model.strip() else DEFAULT_MODEL
