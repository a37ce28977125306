"""The agent DSL extension: compiles ``agent`` and ``stream agent`` blocks into ``AgentDef``.

Registered in the ``bloge.dsl.extensions`` entry-point group as ``agent``. Every problem in a
block is collected and reported at once, each at its own ``file:line:column``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from bloge.agent.agent_calls import QUESTION_PARAMETERS, AgentCall
from bloge.agent.budget_block import budget_field, compile_budget
from bloge.agent.caller_context import SUB_AGENT_CONTEXTS, SubAgentContext, sub_agent_context
from bloge.agent.caller_thread import SUB_AGENT_THREADS, SubAgentThread, sub_agent_thread
from bloge.agent.definition import (
    MESSAGE_PARAMETERS,
    AgentDef,
    AgentToolRef,
    RemoteAgent,
    build_tool,
    remote_operator_ref,
    remote_url_problem,
    reserved_tool_name_problem,
)
from bloge.agent.functions import AGENT_FUNCTIONS, named_tool_calls, unknown_tool_problem
from bloge.agent.guards.compile import GUARD_FORM, BlockTools, compile_guard
from bloge.agent.guards.model import GuardDef
from bloge.agent.handoffs import HandoffDef
from bloge.agent.keywords import (
    AGENT_BODY_WORDS,
    AGENT_TOOL_BODY_WORDS,
    KEYWORDS,
    PARAMETER_TYPES,
    REMOTE_PROTOCOLS,
    REMOTE_TOOL_BODY_WORDS,
    TOOL_ARGS_SCOPE,
    TOOL_BODY_WORDS,
    TOOL_TIMEOUT,
    exit_condition_variable_problem,
    fallback_problem,
    input_binding_variable_problem,
    memory_size_problem,
    models_of,
    tool_choice_problem,
    window_block_problem,
)
from bloge.agent.memory.strategy import DSL_STRATEGIES, AgentMemoryStrategy, MemoryStrategy
from bloge.agent.named_agents import Where
from bloge.agent.output.compile import output_block, output_reference
from bloge.agent.output.schema import OutputSchema
from bloge.agent.schema import TOOL_ARGS
from bloge.core.errors import CompileError, DslError, ExpressionError
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s
from bloge.dsl.expression import Expression, Function, walk
from bloge.dsl.extensions import CompileOptions
from bloge.dsl.source import SourceText, unquoted_text

#: What a block's choice of a few words is made into (a sub-agent tool's context, its thread).
_Choice = TypeVar("_Choice")

#: The words of an agent that open blocks, and how they are written.
_BLOCK_FORMS = {"tool": "tool <name> : <Operator> { … }",
                "input": "input { <name> = <expression> … }",
                "output": "output { <field>: <type> … } or output = <RegisteredType>",
                "guard": GUARD_FORM,
                "handoff": 'handoff <name> : agent <agentId> { description = "…" }',
                "budget": "budget { tokens = …, usd = …, tool_calls = … }"}

#: Python's constants, as the DSL writes them.
_PYTHON_CONSTANTS = {"True": "true", "False": "false", "None": "null"}


class AgentExtensionProvider:
    """Contributes the ``agent`` block kind (and its ``stream agent`` shorthand) and the
    ``tool_call(name)`` function of exit conditions."""

    kind = "agent"

    def claims(self, block: s.Block) -> bool:
        words = _header_words(block)
        return words[:1] == ("agent",) or words[:2] == ("stream", "agent")

    def compile_block(
        self, block: s.Block, source: SourceText, options: CompileOptions
    ) -> AgentDef:
        return _AgentBlock(block, source, options).compile()

    def functions(self) -> Mapping[str, Function]:
        return AGENT_FUNCTIONS


def _header_words(block: s.Block) -> tuple[str, ...]:
    return (*block.keywords, block.name) if block.name is not None else block.keywords


@dataclass
class _AgentBlock:
    """Compiles one agent block, collecting every problem it finds."""

    block: s.Block
    source: SourceText
    options: CompileOptions
    errors: list[DslError] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    seen: dict[str, s.Span] = field(default_factory=dict)
    tools: list[AgentToolRef] = field(default_factory=list)
    guards: list[GuardDef] = field(default_factory=list)
    handoffs: list[HandoffDef] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    """Every tool declared, the ones with errors too (``tool_call`` is checked against them)."""
    agent_calls: list[AgentCall] = field(default_factory=list)

    def compile(self) -> AgentDef:
        agent_id = self._header()
        streaming_prefix = self.block.keywords[:1] == ("stream",)
        for statement in self.block.body:
            self._statement(statement)
        if "model" not in self.values and "model" not in self.seen:
            where = self.block.name_span or self.block.span
            self._error(f'agent {agent_id!r} has no model; add model = "<model id>"', where)
        if streaming_prefix and self.values.get("streaming") is False:
            self._error("'stream agent' declares a streaming agent; remove streaming = false",
                        self.seen["streaming"])
        self._check_tool_calls()
        self._check_handoff_tools()
        choice = tool_choice_problem(self.values.get("tool_choice"),
                                     tuple(t.name for t in self.tools))
        if choice:
            self._error(choice, self.seen["tool_choice"])
        repeated = fallback_problem(self.values.get("model"), self.values.get("fallback"))
        if repeated:
            self._error(repeated, self.seen.get("fallback") or self.seen["model"])
        if self.errors:
            raise DslError.collect(self.errors)
        return AgentDef(
            id=agent_id,
            tools=tuple(self.tools),
            guards=tuple(self.guards),
            agent_calls=tuple(self.agent_calls),
            handoffs=tuple(self.handoffs),
            **{**self.values, **({"streaming": True} if streaming_prefix else {})},
        )

    # -- header and body

    def _header(self) -> str:
        words = _header_words(self.block)
        prefix = 2 if words[0] == "stream" else 1
        if len(words) == prefix:
            self._error(f"{' '.join(words)} blocks need a name: {' '.join(words)} <id> {{ … }}",
                        self.block.span)
            raise DslError.collect(self.errors)
        if len(words) > prefix + 1:
            self._error(f"unexpected words in the agent header: {' '.join(words[prefix:-1])}",
                        self.block.span)
        if self.block.ref is not None and self.block.ref_span is not None:
            self._error("an agent block takes no ': <Operator>' reference", self.block.ref_span)
        return words[-1]

    def _statement(self, statement: s.Statement) -> None:
        match statement:
            case s.Binding(key, value, span, key_span):
                if not self._first(key, key_span) or self._has_no_value(key, key_span, value):
                    return
                if key in KEYWORDS:
                    self._keyword(key, value)
                elif key == "memory":
                    self._memory(value)
                elif key == "exit_condition":
                    self._exit_condition(value)
                elif key == "output":
                    self._output(output_reference(value, self.options.types, self._error))
                else:
                    self._unknown(key, key_span, AGENT_BODY_WORDS, self._where)
            case s.Block(keywords=("tool",)):
                self._tool(statement)
            case s.Block(keywords=("handoff",)):
                self._handoff(statement)
            case s.Block(keywords=("output",), name=None, ref=None, span=span):
                if self._first("output", span):
                    self._output(output_block(statement, self.block.name or "output",
                                              self._error))
            case s.Block(keywords=("guard", *_)):
                guard = compile_guard(statement, BlockTools(
                    self.options.registry, self._error, self._first, self._constant,
                    self._scoped_expression, _INVALID))
                if guard is not None:
                    self.guards.append(guard)
            case s.Block(keywords=("budget",)) | s.Block(keywords=(), name="budget"):
                self._budget(statement)
            case s.Block(span=span):
                label = " ".join(statement.keywords)
                self._unknown(label, span, ("tool", "handoff", "output", "guard", "budget"),
                              self._where,
                              block=True)
            case s.Edge(span=span):
                self._error("edges (a -> b) belong in a graph, not in an agent", span)
            case s.Field(names=(name,), span=span) if name in AGENT_BODY_WORDS:
                self._error(f"{name} takes its value after '=': write {name} = "
                            f"{self.source.slice(statement.type.span)}", span)
            case s.Field(span=span):
                self._error("fields (name: type) belong in an output { … } block", span)

    @property
    def _where(self) -> str:
        return f"agent {self.block.name!r}"

    def _first(self, key: str, span: s.Span, scope: dict[str, s.Span] | None = None) -> bool:
        seen = self.seen if scope is None else scope
        if key in seen:
            first = seen[key]
            what = (f"tool name {key.removeprefix('tool ')!r}" if key.startswith("tool ")
                    else f"keyword {key!r}")
            self._error(f"duplicate {what} (first at line {first.line}, column {first.column})",
                        span)
            return False
        seen[key] = span
        return True

    def _unknown(self, word: str, span: s.Span, known: tuple[str, ...], where: str,
                 *, block: bool = False) -> None:
        if word in known:  # a known word in the other form: input = …, description { … }
            form = _BLOCK_FORMS.get(word, f"{word} = <value>")
            kind = "a block" if word in _BLOCK_FORMS else "a keyword"
            self._error(f"{word!r} in {where} is {kind}: write {form}", span, width=len(word))
            return
        hint = did_you_mean_hint(word, known, otherwise=f" (known: {', '.join(known)})")
        what = "block" if block else "keyword"
        self._error(f"unknown {what} {word!r} in {where}{hint}", span, width=len(word))

    # -- values

    def _has_no_value(self, key: str, key_span: s.Span, value: s.Expr) -> bool:
        """``key =`` with nothing after it on its line reads the next statement's first word
        as its value (``tool``, ``memory`` …): an error saying the key has no value, at the
        key, instead of a hint at that word."""
        if not (isinstance(value, s.Var) and value.span.line > key_span.line
                and value.name in AGENT_BODY_WORDS):
            return False
        self._error(f"{key} has no value: write {key} = <value> (the next line's "
                    f"{value.name!r} begins another statement)", key_span, width=len(key))
        return True

    def _keyword(self, key: str, node: s.Expr) -> None:
        value = self._constant(key, node)
        if value is _INVALID:
            return
        if key == "model" and isinstance(value, list):
            self._models(value, node)
            return
        if key == "fallback" and "fallback" in self.values:
            self._error("the model list names the fallbacks already; remove fallback = …",
                        node.span)
            return
        keyword = KEYWORDS[key]
        problem = keyword.problem(value)
        if problem:
            self._error(problem, node.span)
            return
        self.values[key] = keyword.normalize(value)

    def _models(self, value: list[Any], node: s.Expr) -> None:
        """``model = ["a", "b"]``: the model, then its fallbacks."""
        if "fallback" in self.seen:
            self._error("the model list names the fallbacks already; remove fallback = …",
                        self.seen["fallback"])
            return
        model, fallback = models_of(value)
        for key, part in (("model", model), ("fallback", fallback)):
            problem = KEYWORDS[key].problem(part) if value else "model needs at least one name"
            if problem:
                self._error(problem.replace("fallback must", "the model list must"), node.span)
                return
        self.values["model"], self.values["fallback"] = model, fallback

    def _constant(self, key: str, node: s.Expr) -> Any:
        for variable in (n for n in walk(node) if isinstance(n, s.Var)):
            text = self.source.slice(node.span)  # only a mistake needs it
            if variable.name == TOOL_ARGS:
                self._error(TOOL_ARGS_SCOPE, variable.span, width=len(TOOL_ARGS))
            elif isinstance(node, s.Var) and text in _PYTHON_CONSTANTS:
                self._error(f"{key} must be a constant; {text} is not one (the DSL writes "
                            f"{_PYTHON_CONSTANTS[text]}, in lower case)", node.span)
            elif isinstance(node, s.Var) or unquoted_text(text):  # gpt4, claude-3-5-sonnet
                self._error(f'{key} must be a constant; did you mean the string "{text}"?',
                            node.span)
            else:
                self._error(f"{key} must be a constant; {variable.name!r} is not defined here",
                            variable.span)
            return _INVALID
        try:
            return self._expression(node).evaluate()
        except ExpressionError as exc:
            self._error(exc.reason, node.span)
            return _INVALID
        except DslError as exc:
            self.errors.extend(exc.errors)
            return _INVALID

    def _expression(self, node: s.Expr) -> Expression:
        return Expression.from_node(node, self.source, self.source.slice(node.span),
                                    functions=self.options.functions)

    def _memory(self, node: s.Expr) -> None:
        strategy = self._memory_strategy(node)
        if strategy is not None:
            self.values["memory_strategy"] = strategy

    def _memory_strategy(self, node: s.Expr) -> MemoryStrategy | None:
        known = tuple(DSL_STRATEGIES)
        if isinstance(node, s.Var) and node.name in DSL_STRATEGIES:
            self._error(f"memory strategies are calls: write {node.name}(…)", node.span)
            return None
        if not isinstance(node, s.Call):
            self._error(f"memory must be one of {', '.join(f'{k}(…)' for k in known)}", node.span)
            return None
        if node.function not in DSL_STRATEGIES:
            self._unknown_strategy(node)
            return None
        kind, meaning = DSL_STRATEGIES[node.function]
        if meaning is None:
            if node.args:
                self._error(f"{node.function}() takes no arguments", node.span)
                return None
            return AgentMemoryStrategy.Full()
        if kind is AgentMemoryStrategy.SlidingWindow and len(node.args) == 2:
            return self._block_window(node)
        if len(node.args) != 1:
            self._error(f"{node.function}(n) takes exactly one argument, the {meaning}",
                        node.span)
            return None
        size = self._constant(node.function, node.args[0])
        if size is _INVALID:
            return None
        problem = memory_size_problem(node.function, meaning, size)
        if problem:
            self._error(problem, node.args[0].span)
            return None
        strategy: MemoryStrategy = kind(size)
        return strategy

    def _block_window(self, node: s.Call) -> MemoryStrategy | None:
        """``sliding_window(n, block)``: a window that moves ``block`` messages at a time."""
        size, block = (self._constant(node.function, arg) for arg in node.args)
        if size is _INVALID or block is _INVALID:
            return None
        problem = memory_size_problem(node.function, "window size", size)
        if problem:
            self._error(problem, node.args[0].span)
            return None
        problem = window_block_problem(size, block)
        if problem:
            self._error(problem, node.args[1].span)
            return None
        return AgentMemoryStrategy.SlidingWindow(size, block)

    def _unknown_strategy(self, node: s.Call) -> None:
        hint = did_you_mean_hint(node.function, DSL_STRATEGIES, shown="{}()")
        listing = ", ".join(f"{k}()" for k in DSL_STRATEGIES)
        self._error(f"unknown memory strategy {node.function}(){hint} (known: {listing})",
                    node.span, width=len(node.function))

    def _exit_condition(self, node: s.Expr) -> None:
        if isinstance(node, s.Literal) and node.value is None:
            return
        expression = self._scoped_expression(node, exit_condition_variable_problem)
        if expression is not None:
            self.values["exit_condition"] = expression

    def _check_tool_calls(self) -> None:
        """A ``tool_call("name")`` of a tool the agent lacks would never fire: an error, with
        the closest tool name."""
        condition = self.values.get("exit_condition")
        if condition is None:
            return
        for literal in named_tool_calls(condition.node):
            problem = unknown_tool_problem(literal.value, self.tool_names)
            if problem:
                self._error(problem, literal.span)

    def _check_handoff_tools(self) -> None:
        """A handoff whose tool, ``transfer_to_<name>``, has the name of one of the agent's
        tools: an error at the handoff's name, saying where that tool is."""
        for handoff in self.handoffs:
            tool = self.seen.get(f"tool {handoff.tool_name}")
            if tool is not None:
                self._error(f"handoff {handoff.name!r} is offered as the tool "
                            f"{handoff.tool_name!r}, which is also the name of the tool at "
                            f"line {tool.line}, column {tool.column}; rename one of them",
                            self.seen[f"handoff {handoff.name}"])

    def _scoped_expression(
        self, node: s.Expr, variable_problem: Callable[[str], str | None]
    ) -> Expression | None:
        """``node`` compiled, when every variable it reads is in scope (else ``None``, errors
        recorded): an unknown name is a mistake to report, never a silent ``null``."""
        problems = False
        variables = sorted((n for n in walk(node) if isinstance(n, s.Var)),
                           key=lambda v: (v.span.line, v.span.column))
        for variable in variables:
            problem = variable_problem(variable.name)
            if problem:
                self._error(problem, variable.span, width=len(variable.name))
                problems = True
        if problems:
            return None
        try:
            return self._expression(node)
        except DslError as exc:
            self.errors.extend(exc.errors)
            return None

    def _budget(self, block: s.Block) -> None:
        name = budget_field(block, self._error)
        if name is None or not self._first(name, block.span):
            return
        budget = compile_budget(block, self._error, self._constant, _INVALID)
        if budget is not None:
            self.values[name] = budget

    # -- tools

    def _tool(self, block: s.Block) -> None:
        if not self._tool_declared(block):
            return
        assert block.name is not None
        assert block.ref is not None
        self.tool_names.append(block.name)
        remote = block.ref_kind in REMOTE_PROTOCOLS
        words = _TOOL_BODY_WORDS.get(block.ref_kind or "", TOOL_BODY_WORDS)
        seen: dict[str, s.Span] = {}
        idempotent = False
        description = ""
        timeout: float | None = None
        bindings: dict[str, Expression] | None = None
        approval: bool | Expression = False
        parameters: dict[str, Any] | None = None
        runs_on: dict[str, s.Expr] = {}  # an agent tool's context and thread
        for statement in block.body:
            match statement:
                case s.Binding("description", value, _, key_span):
                    if self._first("description", key_span, seen):
                        description = self._description(value)
                case s.Binding("context" | "thread" as key, value, _, key_span) \
                        if block.ref_kind == "agent":
                    if self._first(key, key_span, seen):
                        runs_on[key] = value
                case s.Binding("timeout", value, _, key_span):
                    if self._first("timeout", key_span, seen):
                        timeout = self._tool_timeout(value)
                case s.Block(keywords=("input",), name=None, span=span) if statement.ref is None:
                    if self._first("input", span, seen):
                        bindings = self._input(statement)
                case s.Binding("requires_approval", value, _, key_span):
                    if self._first("requires_approval", key_span, seen):
                        approval = self._approval(value)
                case s.Block(keywords=("parameters",), name=None, span=span) \
                        if statement.ref is None:
                    if self._first("parameters", span, seen):
                        parameters = self._parameters(statement)
                case s.Binding("idempotent", value, _, key_span) if remote:
                    if self._first("idempotent", key_span, seen):
                        idempotent = self._flag("idempotent", value)
                case s.Binding(key, _, _, key_span):
                    self._unknown(key, key_span, words, f"tool {block.name!r}")
                case s.Block(span=span):
                    self._unknown(" ".join(statement.keywords), span, words,
                                  f"tool {block.name!r}", block=True)
                case s.Edge(span=span):
                    self._error("edges (a -> b) belong in a graph, not in a tool", span)
                case s.Field(span=span):
                    self._error("fields (name: type) belong in an agent's output { … } block",
                                span)
        if block.ref_kind == "agent":
            self._agent_tool(block, description=description, timeout=timeout,
                             bindings=bindings, approval=approval, parameters=parameters,
                             context=self._sub_agent_context(runs_on.get("context")),
                             thread=self._sub_agent_thread(runs_on.get("thread")))
        elif remote:
            self._remote_tool(block, RemoteAgent(block.ref_kind or "", block.ref, idempotent,
                                                 timeout),
                              description=description, bindings=bindings,
                              parameters=parameters, approval=approval)
        else:
            self._operator_tool(block, description=description, bindings=bindings,
                                timeout=timeout, parameters=parameters, approval=approval,
                                settings=seen)

    def _operator_tool(self, block: s.Block, *, description: str,
                       bindings: dict[str, Expression] | None, timeout: float | None,
                       parameters: dict[str, Any] | None, approval: bool | Expression,
                       settings: Mapping[str, s.Span]) -> None:
        """A tool an operator runs (or, ``: external``, none does: its results are posted);
        ``settings``: where its body set each key."""
        assert block.name is not None
        assert block.ref is not None
        if block.ref == "external":
            self._external_settings(block.name, settings)
            self.tools.append(AgentToolRef.external_tool(block.name, description=description,
                                                         parameters=parameters))
            return
        registry = self.options.registry
        if registry is not None and block.ref not in registry:
            hint = did_you_mean_hint(block.ref, registry)
            self._error(f"tool {block.name!r} refers to operator {block.ref!r}, which is not "
                        f"in the registry{hint}", block.ref_span or block.span)
            return
        self.tools.append(build_tool(block.name, block.ref, description=description,
                                     bindings=bindings, registry=registry, timeout=timeout,
                                     parameters=parameters, requires_approval=approval))

    def _external_settings(self, name: str, seen: Mapping[str, s.Span]) -> None:
        """Errors for the settings of an external tool no operator would read."""
        for key, why in _EXTERNAL_IGNORES.items():
            if key in seen:
                self._error(f"tool {name!r} is external, so {key} does not apply: {why}",
                            seen[key])

    def _agent_tool(self, block: s.Block, *, description: str, timeout: float | None,
                    bindings: dict[str, Expression] | None, approval: bool | Expression,
                    parameters: dict[str, Any] | None, context: SubAgentContext | None,
                    thread: SubAgentThread | None) -> None:
        """``tool <name> : agent <agentId> { … }``: a call asks that agent (which the loader
        resolves among the agents it knows, see :mod:`bloge.agent.subagent`), from the
        ``context`` the block sets, on the ``thread`` it sets (``None``: the
        application's)."""
        assert block.name is not None
        assert block.ref is not None
        span = block.ref_span or block.span
        if "." in block.ref:
            self._error(f"tool {block.name!r}: an agent's id has no '.': {block.ref!r}", span)
            return
        call = AgentCall(block.name, block.ref, self._place(span, len(block.ref)), context,
                         thread)
        self.agent_calls.append(call)
        if parameters is None and bindings is None:
            parameters = dict(QUESTION_PARAMETERS)
        self.tools.append(build_tool(
            block.name, call.operator_ref,
            description=description or f"Ask agent {block.ref!r}", bindings=bindings,
            timeout=timeout, parameters=parameters, requires_approval=approval))

    def _tool_declared(self, block: s.Block) -> bool:
        """Whether the tool's header is whole: a name, an operator (or a remote agent's
        protocol and URL), and a name no other tool of the agent has (errors if not). A
        reserved name is an error too, but the tool is compiled on."""
        if block.name is None or block.ref is None:
            self._error("a tool needs a name and an operator: tool <name> : <Operator> { … }",
                        block.span)
            return False
        if block.ref_kind in (None, "agent", *REMOTE_PROTOCOLS):
            reserved = reserved_tool_name_problem(block.name)
            if reserved:
                self._error(reserved, block.name_span or block.span, width=len(block.name))
            return self._first(f"tool {block.name}", block.name_span or block.span)
        self._error(f"tool {block.name!r}: {block.ref_kind!r} is no protocol a remote agent is "
                    f'asked with; write tool {block.name} : a2a "<url>" {{ … }}', block.span)
        return False

    def _remote_tool(self, block: s.Block, remote: RemoteAgent, *, description: str,
                     bindings: dict[str, Expression] | None,
                     parameters: dict[str, Any] | None, approval: bool | Expression) -> None:
        """A tool that asks the agent at ``remote.url``: its operator is registered by whoever
        runs the agent (the application does, from ``bloge.a2a``)."""
        assert block.name is not None
        problem = remote_url_problem(remote.url)
        if problem:
            self._error(f"tool {block.name!r}: {problem}", block.ref_span or block.span)
            return
        if parameters is None and bindings is None:
            parameters = dict(MESSAGE_PARAMETERS)
        ref = remote_operator_ref(self.block.name or "", block.name)
        # The call's own timeout (remote.timeout) bounds it, so that its error names the URL.
        tool = build_tool(block.name, ref, description=description, bindings=bindings,
                          parameters=parameters, requires_approval=approval)
        self.tools.append(replace(tool, remote=remote))

    def _description(self, node: s.Expr) -> str:
        """A tool's or a handoff's ``description``: a string (an error, and ``""``, if not)."""
        text = self._constant("description", node)
        if isinstance(text, str):
            return text
        if text is not _INVALID:
            self._error("description must be a string", node.span)
        return ""

    def _sub_agent_context(self, node: s.Expr | None) -> SubAgentContext | None:
        """An agent tool's ``context``: ``"fresh"`` or ``"parent"``."""
        return self._one_of("context", node, SUB_AGENT_CONTEXTS, sub_agent_context,
                            "what the agent's run starts from: the question alone, or the "
                            "caller's conversation too")

    def _sub_agent_thread(self, node: s.Expr | None) -> SubAgentThread | None:
        """An agent tool's ``thread``: ``"fresh"`` or ``"parent"``."""
        return self._one_of("thread", node, SUB_AGENT_THREADS, sub_agent_thread,
                            "which thread the agent's run is recorded on: one of its own, or "
                            "its caller's")

    def _one_of(self, key: str, node: s.Expr | None, choices: tuple[str, ...],
                chosen: Callable[..., _Choice], meaning: str) -> _Choice | None:
        """A block's ``key``, one of ``choices``, as ``chosen(value, where=key)`` makes it;
        ``None`` when the block has none, or (an error saying ``meaning``) another value."""
        if node is None:
            return None
        value = self._constant(key, node)
        if value in choices:
            return chosen(value, where=key)
        if value is not _INVALID:
            self._error(f"{key} must be one of {', '.join(map(repr, choices))} ({meaning}), "
                        f"got {value!r}", node.span)
        return None

    def _flag(self, key: str, node: s.Expr) -> bool:
        value = self._constant(key, node)
        if isinstance(value, bool):
            return value
        if value is not _INVALID:
            self._error(f"{key} must be true or false", node.span)
        return False

    def _handoff(self, block: s.Block) -> None:
        """``handoff <name> : agent <agentId> { description = "…" }``; whether the agent
        exists is checked once every agent of the project is compiled
        (:func:`~bloge.agent.handoffs.check_targets`)."""
        form = _BLOCK_FORMS["handoff"]
        if block.name is None or block.agent is None or block.ref_span is None:
            self._error(f"a handoff needs a name and an agent: {form}",
                        block.ref_span or block.span)
            return
        if not self._first(f"handoff {block.name}", block.name_span or block.span):
            return
        if block.agent == self.block.name:
            self._error(f"handoff {block.name!r} goes to agent {block.agent!r} itself; a "
                        "handoff names another agent", block.ref_span, width=len(block.agent))
            return
        seen: dict[str, s.Span] = {}
        description = ""
        for statement in block.body:
            match statement:
                case s.Binding("description", value, _, key_span):
                    if self._first("description", key_span, seen):
                        description = self._description(value)
                case s.Binding(key, _, _, key_span):
                    self._unknown(key, key_span, ("description",), f"handoff {block.name!r}")
                case _:
                    self._error(f"a handoff holds only its description: {form}",
                                statement.span)
        self.handoffs.append(HandoffDef(block.name, block.agent, description,
                                        self._place(block.ref_span, len(block.agent))))

    def _approval(self, node: s.Expr) -> bool | Expression:
        """``requires_approval``: ``true``, ``false``, or an expression over ``tool_args``."""
        if isinstance(node, s.Literal):
            if isinstance(node.value, bool):
                return node.value
            self._error("requires_approval must be true, false or an expression over "
                        "tool_args", node.span)
            return False
        expression = self._scoped_expression(node, functools.partial(
            input_binding_variable_problem, key="requires_approval"))
        return True if expression is None else expression  # an error is reported: fail closed

    def _parameters(self, block: s.Block) -> dict[str, Any]:
        """``parameters { name = "type" … }``: the JSON schema of the arguments; a type
        ending in ``?`` is optional."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        seen: dict[str, s.Span] = {}
        for statement in block.body:
            if not isinstance(statement, s.Binding):
                self._error('a parameters block holds only name = "type" bindings',
                            statement.span)
                continue
            if not self._first(statement.key, statement.key_span, seen):
                continue
            kind = self._constant(statement.key, statement.value)
            name = kind.rstrip("?") if isinstance(kind, str) else None
            if name not in PARAMETER_TYPES:
                if kind is not _INVALID:
                    self._error(f"parameter {statement.key!r} needs a type, one of "
                                f"{', '.join(PARAMETER_TYPES)} (\"string?\": optional)",
                                statement.value.span)
                continue
            properties[statement.key] = {"type": name}
            if not kind.endswith("?"):
                required.append(statement.key)
        return {"type": "object", "properties": properties, "required": required}

    def _tool_timeout(self, node: s.Expr) -> float | None:
        value = self._constant("timeout", node)
        if value is _INVALID:
            return None
        problem = TOOL_TIMEOUT.problem(value)
        if problem:
            self._error(problem, node.span)
            return None
        normalized: float | None = TOOL_TIMEOUT.normalize(value)
        return normalized

    def _input(self, block: s.Block) -> dict[str, Expression]:
        bindings: dict[str, Expression] = {}
        seen: dict[str, s.Span] = {}
        for statement in block.body:
            if not isinstance(statement, s.Binding):
                self._error("an input block holds only key = value bindings", statement.span)
                continue
            if not self._first(statement.key, statement.key_span, seen):
                continue
            expression = self._scoped_expression(
                statement.value, functools.partial(input_binding_variable_problem,
                                                   key=statement.key)
            )
            if expression is not None:
                bindings[statement.key] = expression
        return bindings

    def _output(self, schema: OutputSchema | None) -> None:
        if schema is not None:
            self.values["output"] = schema

    def _error(self, message: str, span: s.Span, *, width: int | None = None) -> None:
        self.errors.append(self.source.error(CompileError, message, span, width=width))

    def _place(self, span: s.Span, width: int) -> Where:
        """``width`` characters at ``span``, kept for an error found once every agent is
        compiled."""
        return Where(self.source.filename, span.line, span.column, self.source.line(span.line),
                     width)


_INVALID: Any = object()
#: The words of a tool's body by what runs it, when not an operator.
_TOOL_BODY_WORDS = {"agent": AGENT_TOOL_BODY_WORDS,
                    **dict.fromkeys(REMOTE_PROTOCOLS, REMOTE_TOOL_BODY_WORDS)}
#: The settings of an operator's tool an external tool has no use for, and why.
_EXTERNAL_IGNORES = {
    "requires_approval": "its call always waits, for its result posted from outside",
    "input": "no operator takes an input; whoever answers the call gets the model's "
             "arguments (declare them with parameters { … })",
    "timeout": "its call waits for its result until bloge.approvals.tool-results-expiry",
}
