"""``AgentBuilder``: every DSL keyword as a fluent Python method."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Self

from bloge.agent.agent_calls import QUESTION_PARAMETERS, AgentCall
from bloge.agent.budget import Budget
from bloge.agent.caller_context import SubAgentContext, sub_agent_context
from bloge.agent.caller_thread import SubAgentThread, sub_agent_thread
from bloge.agent.definition import AgentDef, AgentToolRef, guards_problems, memory_problem
from bloge.agent.functions import agent_functions
from bloge.agent.guards.model import GuardDef
from bloge.agent.handoffs import HandoffDef, handoff_problems
from bloge.agent.keywords import KEYWORDS, exit_condition_variable_problem
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.base import AgentOperatorBase
from bloge.agent.loop.operator import AgentLoopOperator
from bloge.agent.loop.streaming import StreamingAgentLoopOperator
from bloge.agent.memory.conversation import ConversationMemory
from bloge.agent.memory.strategy import MemoryStrategy
from bloge.agent.named_agents import Where
from bloge.agent.subagent import DEFAULT_MAX_DESCENDANT_TOOL_CALLS, SubAgentTool
from bloge.core.errors import BlogeUsageError
from bloge.core.registry import OperatorRegistry
from bloge.dsl.expression import Expression


class AgentBuilder:
    """Builds an :class:`AgentDef` in Python, with the DSL compiler's rules.

    >>> agent = (AgentBuilder.create("support").model("gpt-4o").max_turns(6)
    ...          .exit_condition('finish_reason == "stop"').build())

    Each setter checks its value at once and raises ``BlogeUsageError`` naming the problem.
    """

    __slots__ = ("_registry", "_tools", "_values")

    def __init__(self, agent_id: str, *, registry: OperatorRegistry | None = None) -> None:
        if not isinstance(agent_id, str) or not agent_id.strip():
            raise BlogeUsageError(f"an agent id must be a non-empty string, got {agent_id!r}")
        self._values: dict[str, Any] = {"id": agent_id}
        self._tools: list[AgentToolRef] = []
        self._registry = registry

    @classmethod
    def create(cls, agent_id: str, *, registry: OperatorRegistry | None = None) -> AgentBuilder:
        """A fresh builder. ``registry`` is used to check tools and to materialize operators."""
        return cls(agent_id, registry=registry)

    @classmethod
    def from_def(cls, definition: AgentDef, *, registry: OperatorRegistry | None = None) -> Self:
        """A builder holding every field of ``definition``, to derive a variant from it:
        ``from_def(d).build() == d``."""
        builder = cls(definition.id, registry=registry)
        builder._values.update(
            (f.name, getattr(definition, f.name)) for f in fields(AgentDef) if f.name != "tools"
        )
        builder._tools = list(definition.tools)
        return builder

    # -- keywords

    def model(self, model: str, *fallback: str) -> Self:
        """The model of every call; ``fallback`` models are tried in order when a call to it
        fails over (as ``model = ["a", "b"]`` in the DSL)."""
        self._set("model", model)
        return self.fallback(*fallback) if fallback else self

    def fallback(self, *models: str) -> Self:
        """Models tried in order when a call fails over: a provider overloaded, rate-limited
        or unreachable (our addition; see :mod:`bloge.llm.fallback`)."""
        return self._set("fallback", models)

    def system_prompt(self, prompt: str | None) -> Self:
        return self._set("system_prompt", prompt)

    def max_turns(self, turns: int) -> Self:
        return self._set("max_turns", turns)

    def max_tool_concurrency(self, limit: int | None) -> Self:
        return self._set("max_tool_concurrency", limit)

    def temperature(self, temperature: float | None) -> Self:
        return self._set("temperature", temperature)

    def streaming(
        self, streaming: bool = True,  # noqa: FBT001, FBT002 -- as the appendix has it
    ) -> Self:
        return self._set("streaming", streaming)

    def streaming_buffer_capacity(self, capacity: int) -> Self:
        return self._set("streaming_buffer_capacity", capacity)

    def tool_timeout(self, seconds: float | None) -> Self:
        """Cancel any tool call that runs longer than ``seconds`` (our addition)."""
        return self._set("tool_timeout", seconds)

    def max_tokens(self, tokens: int | None) -> Self:
        """Bound each model answer to ``tokens`` (our addition; ``None``: the provider's)."""
        return self._set("max_tokens", tokens)

    def tool_choice(self, choice: str | None) -> Self:
        """``"auto"``, ``"required"``, ``"none"`` or a tool's name (our addition); a name
        must be one of the agent's tools when :meth:`build` runs."""
        return self._set("tool_choice", choice)

    def stop(self, *sequences: str) -> Self:
        """End each model answer at any of ``sequences`` (our addition)."""
        return self._set("stop", sequences)

    def seed(self, seed: int | None) -> Self:
        """Ask the provider for repeatable sampling (our addition)."""
        return self._set("seed", seed)

    def parallel_tool_calls(
        self, parallel: bool | None,  # noqa: FBT001 -- a setter of one value, as streaming()
    ) -> Self:
        """``False``: at most one tool call per answer, where the provider has that (our
        addition; ``None``: the provider's default)."""
        return self._set("parallel_tool_calls", parallel)

    def output(self, output_type: Any) -> Self:
        """The result's type: a pydantic model, a dataclass, a TypedDict, or an
        :class:`~bloge.agent.output.schema.OutputSchema` (``None``: a text answer). The run
        ends with an answer that validates, in ``AgentOutput.output``."""
        from bloge.agent.output.schema import OutputSchema  # noqa: PLC0415 -- loads pydantic when used

        self._values["output"] = None if output_type is None else OutputSchema.of(output_type)
        return self

    def budget(self, budget: Budget | Mapping[str, Any] | None = None, /,
               **limits: Any) -> Self:
        """What one run may spend (our addition): a :class:`~bloge.agent.budget.Budget`, or its
        limits, e.g. ``.budget(tokens=50_000, usd=0.50, tool_calls=40, time=30)``."""
        self._values["budget"] = Budget.of(limits if budget is None else budget)
        return self

    def thread_budget(self, budget: Budget | Mapping[str, Any] | None = None, /,
                      **limits: Any) -> Self:
        """What all runs on one thread may spend together (our addition; recorded runs)."""
        self._values["thread_budget"] = Budget.of(limits if budget is None else budget)
        return self

    def memory(self, strategy: MemoryStrategy) -> Self:
        """Pick a memory strategy, e.g. ``AgentMemoryStrategy.SlidingWindow(20)``."""
        problem = memory_problem(strategy)
        if problem:
            raise BlogeUsageError(problem)
        self._values["memory_strategy"] = strategy
        return self

    def exit_condition(self, condition: str | Expression | None) -> Self:
        """Compile or attach the exit condition; unknown variables and ``tool_args`` are errors."""
        if condition is None:
            self._values["exit_condition"] = None
            return self
        expression = condition if isinstance(condition, Expression) else Expression.compile(
            condition, filename="<exit_condition>", functions=agent_functions()
        )
        for name in sorted(expression.variables):
            problem = exit_condition_variable_problem(name)
            if problem:
                raise BlogeUsageError(problem)
        self._values["exit_condition"] = expression
        return self

    def tool(
        self,
        tool: AgentToolRef | str,
        operator_ref: str | None = None,
        *,
        description: str = "",
        input: Mapping[str, str | Expression] | None = None,
        parameters: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        requires_approval: bool | str | Expression = False,
        external: bool = False,
    ) -> Self:
        """Add a tool: an :class:`AgentToolRef`, or its parts as for ``AgentToolRef.of``
        (``requires_approval`` included); ``external=True`` (no ``operator_ref``) adds a
        tool whose results are posted from outside (``AgentToolRef.external_tool``)."""
        if isinstance(tool, str) and external:
            if operator_ref is not None:
                raise BlogeUsageError(f"external tool {tool!r} has no operator_ref")
            tool = AgentToolRef.external_tool(tool, description=description,
                                              parameters=parameters)
        elif isinstance(tool, str):
            if operator_ref is None:
                raise BlogeUsageError(f"tool {tool!r} needs an operator_ref")
            tool = AgentToolRef.of(tool, operator_ref, description=description, input=input,
                                   parameters=parameters, registry=self._registry,
                                   timeout=timeout, requires_approval=requires_approval)
        if any(existing.name == tool.name for existing in self._tools):
            raise BlogeUsageError(f"duplicate tool name {tool.name!r}")
        if self._registry is not None and not tool.external \
                and tool.operator_ref not in self._registry:
            self._registry.get(tool.operator_ref)  # raises with a did-you-mean
        self._tools.append(tool)
        return self

    def sub_agent(self, name: str, agent: AgentOperatorBase, *, description: str = "",
                  input: Mapping[str, str | Expression] | None = None,
                  max_descendant_tool_calls: int | None = DEFAULT_MAX_DESCENDANT_TOOL_CALLS,
                  context: SubAgentContext = "fresh",
                  thread: SubAgentThread = "fresh") -> Self:
        """Add a tool ``name`` that asks ``agent`` (an agent operator, ``Agent.operator``):
        the builder's registry gets its :class:`~bloge.agent.subagent.SubAgentTool` under
        its operator ref (:func:`~bloge.agent.agent_calls.agent_tool_ref`), as the DSL's
        ``tool <name> : agent <id> { context = … thread = … }`` does. Without ``input`` the
        model passes the question as ``input``. ``context`` is what its runs start from (see
        :mod:`bloge.agent.caller_context`), ``thread`` which thread they are recorded on (see
        :mod:`bloge.agent.caller_thread`)."""
        if self._registry is None:
            raise BlogeUsageError(f"sub_agent({name!r}, …) registers the agent's tool: create "
                                  "the builder with AgentBuilder.create(…, registry=…)")
        agent_id = agent.agent_def.id
        on = sub_agent_thread(thread, where=f"sub_agent({name!r}, …)")
        call = AgentCall(name, agent_id, Where("<AgentBuilder>", 1, 1, None, len(agent_id)),
                         context=sub_agent_context(context, where=f"sub_agent({name!r}, …)"),
                         thread=None if on == "fresh" else on)  # the ref it had before threads
        self._registry.register(call.operator_ref, SubAgentTool(
            agent, description=description, context=context, thread=thread,
            max_descendant_tool_calls=max_descendant_tool_calls), replace=True)
        self.tool(name, call.operator_ref, description=description or f"Ask agent {agent_id!r}",
                  input=input, parameters=None if input is not None else QUESTION_PARAMETERS)
        return self.agent_calls(call)

    def agent_calls(self, *calls: AgentCall) -> Self:
        """Record tools that ask other agents, as the DSL declares them (what
        :func:`~bloge.agent.check_agent_calls` checks); :meth:`sub_agent` records its own."""
        self._values["agent_calls"] = (*self._values.get("agent_calls", ()), *calls)
        return self

    def handoff(self, name: str, agent_id: str, *, description: str = "") -> Self:
        """Add a handoff (our addition): the model may hand the conversation to agent
        ``agent_id`` by calling ``transfer_to_<name>`` (see :mod:`bloge.agent.handoffs`); the
        operator's engine is then linked to that agent's (``AgentEngine.link``)."""
        handoffs = (*self._values.get("handoffs", ()), HandoffDef(name, agent_id, description))
        problems = handoff_problems(self._values["id"], handoffs,
                                    [tool.name for tool in self._tools])
        if problems:
            raise BlogeUsageError("; ".join(problems))
        self._values["handoffs"] = handoffs
        return self

    def guard(self, *guards: GuardDef) -> Self:
        """Add guards (our addition): ``input_guard(…)``, ``output_guard(…)``,
        ``tool_call_guard(…)`` or any :class:`~bloge.agent.guards.GuardDef`, checked in the
        order added; two guards of one kind may not share a name."""
        for guard in guards:
            if not isinstance(guard, GuardDef):
                raise BlogeUsageError(f"guard() takes GuardDef values (input_guard(…), "
                                      f"output_guard(…), tool_call_guard(…)), got {guard!r}")
        problems = guards_problems((*self._values.get("guards", ()), *guards))
        if problems:
            raise BlogeUsageError("; ".join(problems))
        self._values["guards"] = (*self._values.get("guards", ()), *guards)
        return self

    def build(self) -> AgentDef:
        """The immutable definition; ``BlogeUsageError`` when ``model`` was never set."""
        if "model" not in self._values:
            raise BlogeUsageError(f"agent {self._values['id']!r} has no model; call .model(…)")
        return AgentDef(tools=tuple(self._tools), **self._values)

    def to_operator(
        self,
        ref: str,
        registry: OperatorRegistry | None = None,
        *,
        listeners: Sequence[AgentExecutionListener] = (),
        summarizer: ConversationMemory.Summarizer | None = None,
    ) -> AgentLoopOperator:
        """Build the definition and materialize an :class:`AgentLoopOperator`."""
        return AgentLoopOperator(ref, self.build(), self._registry_for(registry),
                                 listeners=listeners, summarizer=summarizer)

    def to_streaming_operator(
        self,
        ref: str,
        registry: OperatorRegistry | None = None,
        *,
        listeners: Sequence[AgentExecutionListener] = (),
        summarizer: ConversationMemory.Summarizer | None = None,
    ) -> StreamingAgentLoopOperator:
        """Build the definition and materialize a :class:`StreamingAgentLoopOperator`."""
        definition = self.build()
        if not definition.streaming:
            definition = replace(definition, streaming=True)
        return StreamingAgentLoopOperator(ref, definition, self._registry_for(registry),
                                          listeners=listeners, summarizer=summarizer)

    def _registry_for(self, registry: OperatorRegistry | None) -> OperatorRegistry:
        chosen = registry if registry is not None else self._registry
        if chosen is None:
            raise BlogeUsageError("materializing an agent operator needs an OperatorRegistry: "
                                  "pass one here or to AgentBuilder.create(…, registry=…)")
        return chosen

    def _set(self, keyword: str, value: Any) -> Self:
        rule = KEYWORDS[keyword]
        problem = rule.problem(value)
        if problem:
            raise BlogeUsageError(problem)
        self._values[keyword] = rule.normalize(value)
        return self
