"""The agent records: ``AgentDef`` and ``AgentToolRef`` (appendix "Record Schemas")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bloge.agent.agent_calls import AgentCall
from bloge.agent.budget import NO_SHARED_TIME, Budget
from bloge.agent.functions import agent_functions, named_tool_calls, unknown_tool_problem
from bloge.agent.guards.model import GuardDef
from bloge.agent.handoffs import HandoffDef, handoff_problems
from bloge.agent.keywords import (
    DEFAULT_MAX_TURNS,
    DEFAULT_STREAMING_BUFFER_CAPACITY,
    KEYWORDS,
    TOOL_TIMEOUT,
    fallback_problem,
    memory_size_problem,
    tool_choice_problem,
    window_block_problem,
)
from bloge.agent.memory.strategy import AgentMemoryStrategy, MemoryStrategy
from bloge.agent.output.schema import OutputSchema
from bloge.agent.schema import infer_parameters
from bloge.core.errors import BlogeUsageError
from bloge.core.graph import Graph, Node
from bloge.core.masking import mask_url_credentials
from bloge.core.operator import operator_metadata
from bloge.core.registry import OperatorRegistry
from bloge.dsl.expression import Expression
from bloge.llm.structured import OUTPUT_TOOL
from bloge.llm.types import ToolDefinition


@dataclass(frozen=True, slots=True)
class RemoteAgent:
    """The agent of another service a tool asks (``tool quote : a2a "<url>" { … }``): its
    ``protocol`` (``"a2a"``), its ``url``, and whether asking it twice does no harm
    (``idempotent``: a failed call is then tried again, and a call whose outcome a crash left
    unknown is made again when the run resumes), within ``timeout``."""

    protocol: str
    url: str
    idempotent: bool = False
    timeout: float | None = None
    """Seconds a call may take, its attempts together (``None``: the operator's default)."""


#: What a remote agent's tool takes when its block declares no ``parameters`` or ``input``.
MESSAGE_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "What to ask the agent"}},
    "required": ["message"],
}


@dataclass(frozen=True, slots=True)
class AgentToolRef:
    """One tool of an agent: what the model sees and the subgraph that runs it."""

    name: str
    operator_ref: str
    description: str
    graph: Graph
    result_node_id: str
    tool_definition: ToolDefinition
    timeout: float | None = None
    """Seconds a call may take before it is cancelled (``None``: the agent's ``tool_timeout``)."""
    requires_approval: bool | Expression = False
    """Whether a call waits for a person's decision before it runs: always, never, or when
    the expression over ``tool_args`` (and ``ctx``) holds."""
    external: bool = False
    """No operator runs the tool: its result is posted from outside (the run pauses as
    ``awaiting_tool_results`` until it is)."""
    remote: RemoteAgent | None = None
    """The remote agent the tool asks; its operator, registered under ``operator_ref`` by
    whoever runs the agent (see :func:`remote_operator_ref`), makes the call."""

    @classmethod
    def of(
        cls,
        name: str,
        operator_ref: str,
        *,
        description: str = "",
        input: Mapping[str, str | Expression] | None = None,
        parameters: Mapping[str, Any] | None = None,
        registry: OperatorRegistry | None = None,
        timeout: float | None = None,
        requires_approval: bool | str | Expression = False,
    ) -> AgentToolRef:
        """A tool as the DSL would compile it.

        ``input`` maps operator input keys to expressions (``{"query": "tool_args.query"}``);
        without it the operator receives the model's arguments whole (a function of named
        arguments, ``def add(a: int, b: int)``, is called with them, and its schema is the one
        ``Agent(llm, [add])`` shows). ``parameters`` overrides the inferred JSON schema. With a
        ``registry``, an empty description falls back to the operator's metadata and typed
        operator inputs refine the schema. ``requires_approval`` is ``True``, ``False`` or an
        expression over ``tool_args`` (``"tool_args.amount > 100"``): a call it holds for
        waits for a decision (see :class:`~bloge.agent.loop.approval.RunPaused`).
        """
        functions = agent_functions()
        bindings = None if input is None else {
            key: value if isinstance(value, Expression) else Expression.compile(
                value, filename=f"<tool {name} input {key}>", functions=functions
            )
            for key, value in input.items()
        }
        problem = TOOL_TIMEOUT.problem(timeout)
        if problem:
            raise BlogeUsageError(f"tool {name!r}: {problem}")
        return build_tool(
            name, operator_ref, description=description, bindings=bindings,
            parameters=parameters, registry=registry, timeout=timeout,
            requires_approval=approval_rule(name, requires_approval),
        )

    @classmethod
    def external_tool(cls, name: str, *, description: str = "",
                      parameters: Mapping[str, Any] | None = None) -> AgentToolRef:
        """A tool no operator runs: its calls pause the run until their results are posted
        (``POST /runs/{id}/tool-results``, or ``agent.resume(run_id, tool_results=…)``)."""
        schema = dict(parameters) if parameters is not None else {"type": "object"}
        # A node no registry holds: the engine never runs it (its calls wait).
        node = Node(id=name, operator_ref=f"external:{name}")
        return AgentToolRef(name=name, operator_ref=node.operator_ref, description=description,
                            graph=Graph(name=f"tool:{name}", nodes=(node,)),
                            result_node_id=node.id,
                            tool_definition=ToolDefinition(name, description, schema),
                            external=True)


def remote_operator_ref(agent_id: str, tool: str) -> str:
    """The name the operator of agent ``agent_id``'s remote tool ``tool`` is registered under
    (one per tool: two tools may ask one agent with different settings)."""
    return f"a2a:{agent_id}.{tool}"


def remote_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a remote agent's address (``None``: nothing): an
    ``http``/``https`` URL with a host, and no credentials in it (they belong in the
    settings, which keep them out of logs)."""
    parts = urlsplit(url)
    shown = mask_url_credentials(url)
    if "@" in parts.netloc:
        return ("the remote agent's address holds credentials; put its API key in "
                "bloge.a2a.remotes.<name>.api-key instead")
    try:
        parts.port  # noqa: B018 -- read for its check: a port that is no number raises
    except ValueError:
        return f"the remote agent's address has a bad port: {shown!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"the remote agent's address must be an http:// or https:// URL, got {shown!r}"
    if parts.query or parts.fragment:
        return f"the remote agent's address takes no query or fragment, got {shown!r}"
    return None


def approval_rule(name: str, rule: object) -> bool | Expression:
    """``rule`` as an :class:`AgentToolRef`'s ``requires_approval``: a bool, or an expression
    (compiled from text) over ``tool_args``."""
    if isinstance(rule, bool | Expression):
        return rule
    if isinstance(rule, str):
        return Expression.compile(rule, filename=f"<tool {name} requires_approval>",
                                  functions=agent_functions())
    raise BlogeUsageError(f"tool {name!r}: requires_approval is True, False or an expression "
                          f"over tool_args, got {type(rule).__name__}")


def build_tool(
    name: str,
    operator_ref: str,
    *,
    description: str,
    bindings: Mapping[str, Expression] | None,
    parameters: Mapping[str, Any] | None = None,
    registry: OperatorRegistry | None = None,
    timeout: float | None = None,
    requires_approval: bool | Expression = False,
) -> AgentToolRef:
    """Assemble an :class:`AgentToolRef`: the inferred schema, the one-node subgraph."""
    input_type = None
    declared = None
    if registry is not None and operator_ref in registry:
        bound = registry.bound(operator_ref)
        input_type = bound.input_type
        metadata = operator_metadata(bound.target)
        declared = metadata.input_schema
        if declared is None and bound.takes_keywords and callable(bound.target):
            # One function, one schema: the one its Agent(llm, [function]) tool has.
            from bloge.agent.parameters import function_parameters  # noqa: PLC0415 -- loads pydantic when used

            declared = function_parameters(bound.target, name)
        if not description.strip():
            description = metadata.describe()
    schema = dict(parameters) if parameters is not None else infer_parameters(
        None if bindings is None else {k: e.node for k, e in bindings.items()}, input_type,
        declared=declared,
    )
    node = Node(id=name, operator_ref=operator_ref, inputs=bindings)
    return AgentToolRef(
        name=name,
        operator_ref=operator_ref,
        description=description,
        graph=Graph(name=f"tool:{name}", nodes=(node,)),
        result_node_id=node.id,
        tool_definition=ToolDefinition(name, description, schema),
        timeout=timeout,
        requires_approval=requires_approval,
    )


@dataclass(frozen=True, slots=True)
class AgentDef:
    """An agent's complete, validated definition. Fields in the appendix's order."""

    id: str
    model: str
    system_prompt: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_concurrency: int | None = None
    temperature: float | None = None
    memory_strategy: MemoryStrategy = field(default_factory=AgentMemoryStrategy.Full)
    tools: tuple[AgentToolRef, ...] = ()
    exit_condition: Expression | None = None
    streaming: bool = False
    streaming_buffer_capacity: int = DEFAULT_STREAMING_BUFFER_CAPACITY
    tool_timeout: float | None = None
    """Seconds any tool call may take (our addition; ``None``: no limit)."""
    max_tokens: int | None = None
    """The longest answer of each model call, in tokens (our addition; ``None``: the
    provider's setting)."""
    tool_choice: str | None = None
    """Whether the model must call a tool: ``"auto"`` (it chooses; what ``None`` means too),
    ``"required"`` (some tool), ``"none"`` (no tool) or a tool's name (that tool), for every
    model call; with ``"required"`` or a tool's name, the run ends through ``exit_condition``
    or ``max_turns`` (our addition)."""
    stop: tuple[str, ...] = ()
    """Sequences that end a model's answer (our addition)."""
    seed: int | None = None
    """Asks the provider for repeatable sampling, where it has that (our addition)."""
    parallel_tool_calls: bool | None = None
    """``False`` asks the model for at most one tool call per answer, where the provider has
    that (``None``: the provider's default, which allows several; our addition)."""
    output: OutputSchema | None = None
    """The result's type: the run ends with an answer that validates against it, in
    ``AgentOutput.output`` (``None``: the answer is text; see :mod:`bloge.agent.output`)."""
    guards: tuple[GuardDef, ...] = ()
    """Checks on the input, the final answer and each tool call (our addition; see
    :mod:`bloge.agent.guards`)."""
    budget: Budget | None = None
    """What one run may spend (our addition; see :class:`~bloge.agent.budget.Budget`)."""
    thread_budget: Budget | None = None
    """What every run on one thread may spend together, the thread's whole life (our
    addition; kept in the run store, so only recorded runs have it)."""
    fallback: tuple[str, ...] = ()
    """Models tried in order when a call to ``model`` fails over: an overloaded, rate-limited
    or unreachable provider (our addition; see :mod:`bloge.llm.fallback`)."""
    agent_calls: tuple[AgentCall, ...] = ()
    """The tools that run another agent, and where the DSL names it (our addition; see
    :mod:`bloge.agent.subagent`): what the loader checks against the agents it knows."""
    handoffs: tuple[HandoffDef, ...] = ()
    """Agents this one may hand the conversation to (our addition; see
    :mod:`bloge.agent.handoffs`)."""

    def __post_init__(self) -> None:
        problems = definition_problems(self)
        if problems:
            raise BlogeUsageError(f"invalid agent {self.id!r}: " + "; ".join(problems))

    def tool(self, name: str) -> AgentToolRef:
        """The tool called ``name``; ``KeyError`` when there is none."""
        for candidate in self.tools:
            if candidate.name == name:
                return candidate
        raise KeyError(name)


def definition_problems(agent: AgentDef) -> list[str]:
    """Every rule ``agent`` breaks (the same rules the DSL compiler applies)."""
    problems: list[str] = []
    if not isinstance(agent.id, str) or not agent.id.strip():
        problems.append(f"id must be a non-empty string, got {agent.id!r}")
    for keyword in KEYWORDS.values():
        problem = keyword.problem(getattr(agent, keyword.name))
        if problem:
            problems.append(problem)
    problem = memory_problem(agent.memory_strategy)
    if problem:
        problems.append(problem)
    exit_condition: object = agent.exit_condition
    if exit_condition is not None and not isinstance(exit_condition, Expression):
        problems.append("exit_condition must be an Expression or None")
    elif isinstance(exit_condition, Expression):
        tool_names = [t.name for t in agent.tools]
        problems.extend(problem for literal in named_tool_calls(exit_condition.node)
                        if (problem := unknown_tool_problem(literal.value, tool_names)))
    names = [t.name for t in agent.tools]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        problems.append(f"tool names must be unique, repeated: {', '.join(repeated)}")
    problems.extend(problem for name in dict.fromkeys(t.name for t in agent.tools
                                                      if not t.external)
                    if (problem := reserved_tool_name_problem(name)))
    problems.extend(handoff_problems(agent.id, agent.handoffs, names))
    problem = tool_choice_problem(agent.tool_choice, tuple(names))
    if problem:
        problems.append(problem)
    output: object = agent.output
    if output is not None and not isinstance(output, OutputSchema):
        problems.append("output must be an OutputSchema (OutputSchema.of(Model)) or None")
    problems.extend(guards_problems(agent.guards))
    for name in ("budget", "thread_budget"):
        value = getattr(agent, name)
        if value is not None and not isinstance(value, Budget):
            problems.append(f"{name} must be a Budget or None, got {value!r}")
    if isinstance(agent.thread_budget, Budget) and agent.thread_budget.time is not None:
        problems.append(f"thread_budget: {NO_SHARED_TIME}")
    problem = fallback_problem(agent.model, agent.fallback)
    if problem:
        problems.append(problem)
    return problems


def reserved_tool_name_problem(name: str) -> str | None:
    """Why no tool an agent runs may be called ``name``, or ``None``: a typed answer may be
    asked for through a final-answer tool (:data:`~bloge.llm.structured.OUTPUT_TOOL`), in
    any agent (a client's ``response_format`` types an untyped one), and a request holds
    one tool of each name. A client's tool of that name (external: Pydantic AI's answer
    tool) is the client's way of asking for a typed answer, and is not refused."""
    if name != OUTPUT_TOOL:
        return None
    return (f"tool name {name!r} is reserved for the final-answer tool through which a model "
            "gives a typed answer (Anthropic's way, and bloge.output.mode: tool); rename the "
            "tool")


def guards_problems(guards: object) -> list[str]:
    """Why ``guards`` are not a valid tuple of an agent's guards (names unique)."""
    if not isinstance(guards, tuple) or not all(isinstance(g, GuardDef) for g in guards):
        return ["guards must be a tuple of GuardDef"]
    labels = [f"{g.kind} {g.name}" for g in guards]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    return [f"guard names must be unique per kind, repeated: {', '.join(repeated)}"] \
        if repeated else []


def memory_problem(strategy: Any) -> str | None:
    """Why ``strategy`` is not a valid memory strategy, or ``None``."""
    match strategy:
        case AgentMemoryStrategy.Full() | AgentMemoryStrategy.Custom():
            return None
        case AgentMemoryStrategy.SlidingWindow(size, block):
            return (memory_size_problem("sliding_window", "window size", size)
                    or window_block_problem(size, block))
        case AgentMemoryStrategy.TokenBudget(size):
            return memory_size_problem("token_budget", "token budget", size)
        case AgentMemoryStrategy.Summary(size):
            return memory_size_problem("summary", "summary threshold", size)
    return f"memory_strategy must be an AgentMemoryStrategy, got {type(strategy).__name__}"
