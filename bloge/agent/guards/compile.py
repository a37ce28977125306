"""The DSL's ``guard`` blocks of an agent, compiled to :class:`GuardDef` values.

::

    guard input pii : PiiGuard { parallel = true }
    guard output length : MaxLengthGuard { max_chars = 2000  action = "reject" }
    guard tool_call big_refund { when = tool_name == "refund" && tool_args.amount > 500 }

``guard <kind> [<name>] [: <Operator>] { … }``: the kind is ``input``, ``output`` or
``tool_call``; the operator is a built-in guard or a registered operator; ``when`` is an
expression over what the kind sees (:data:`GUARD_VARIABLES`). ``action``, ``parallel`` and
``on_error`` are the guard's own settings; the other bindings are the operator's (a built-in
checks them here, each at its line).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bloge.agent.guards.builtin import BUILTIN_GUARDS
from bloge.agent.guards.model import (
    GUARD_ACTIONS,
    GUARD_KINDS,
    GUARD_ON_ERROR,
    GUARD_VARIABLES,
    GuardDef,
    GuardKind,
)
from bloge.core.registry import OperatorRegistry
from bloge.core.suggest import did_you_mean_hint
from bloge.dsl import syntax as s
from bloge.dsl.expression import Expression

#: How a guard block is written.
GUARD_FORM = "guard input|output|tool_call [<name>] [: <Operator>] { … }"
#: The guard's own settings (the other bindings go to its operator).
_OWN = ("when", "action", "parallel", "on_error")


@dataclass(frozen=True, slots=True)
class BlockTools:
    """What a guard block borrows from the agent block it sits in: its registry, how it
    reports an error, notes a first occurrence, reads a constant (``invalid`` when it could
    not) and compiles a scoped expression."""

    registry: OperatorRegistry | None
    error: Callable[..., None]
    first: Callable[..., bool]
    constant: Callable[[str, s.Expr], Any]
    scoped_expression: Callable[[s.Expr, Callable[[str], str | None]], Expression | None]
    invalid: object


def compile_guard(block: s.Block, tools: BlockTools) -> GuardDef | None:
    """The guard ``block`` declares, or ``None`` after reporting its problems."""
    words = (*block.keywords, block.name) if block.name is not None else block.keywords
    if len(words) < 2 or words[1] not in GUARD_KINDS:
        hint = did_you_mean_hint(words[1], GUARD_KINDS) if len(words) >= 2 else ""
        tools.error(f"a guard names what it checks: {GUARD_FORM}{hint}", block.span)
        return None
    if len(words) > 3:
        tools.error(f"unexpected words in the guard header: {' '.join(words[3:])}; "
                    f"write {GUARD_FORM}", block.span)
        return None
    kind = GUARD_KINDS[GUARD_KINDS.index(words[1])]
    name = words[2] if len(words) == 3 else (block.ref or kind)
    if not tools.first(f"guard {kind} {name}", block.name_span or block.span):
        return None
    body = _Body(tools, kind, name, block.ref is not None)
    read = [body.read(statement) for statement in block.body]  # every problem, not the first
    ok = all(read)
    ok = _operator_checked(block, tools, body.options, body.option_spans, name) and ok
    if block.ref is None and "when" not in body.settings:
        tools.error(f"{kind} guard {name!r} checks nothing: give it an operator "
                    f"(guard {kind} {name} : PiiGuard {{ … }}) or a when expression",
                    block.name_span or block.span)
        ok = False
    if not ok:
        return None
    settings = body.settings
    return GuardDef(name, kind, operator_ref=block.ref, when=settings.get("when"),
                    action=settings.get("action", "trip"),
                    parallel=settings.get("parallel", False),
                    on_error=settings.get("on_error"), options=body.options)


@dataclass
class _Body:
    """Reads a guard block's bindings: its own settings, and its operator's."""

    tools: BlockTools
    kind: GuardKind
    name: str
    has_operator: bool
    settings: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    option_spans: dict[str, s.Span] = field(default_factory=dict)
    seen: dict[str, s.Span] = field(default_factory=dict)

    def read(self, statement: s.Statement) -> bool:
        """Read one statement; whether it was fine."""
        tools = self.tools
        if not isinstance(statement, s.Binding):
            tools.error("a guard block holds only key = value bindings", statement.span)
            return False
        key, value = statement.key, statement.value
        if not tools.first(key, statement.key_span, self.seen):
            return False
        if key == "when":
            self.settings["when"] = tools.scoped_expression(value, _variable_problem(self.kind))
            return self.settings["when"] is not None
        if key not in _OWN and not self.has_operator:
            hint = did_you_mean_hint(key, _OWN)
            tools.error(f"unknown setting {key!r} in {self.kind} guard {self.name!r}{hint}",
                        statement.key_span, width=len(key))
            return False
        constant = tools.constant(key, value)
        if constant is tools.invalid:
            return False
        if key not in _OWN:
            self.options[key] = constant
            self.option_spans[key] = statement.key_span
            return True
        problem = _own_problem(key, constant, self.kind)
        if problem:
            tools.error(problem, value.span)
            return False
        self.settings[key] = constant
        return True


def _operator_checked(block: s.Block, tools: BlockTools, options: dict[str, Any],
                      spans: dict[str, s.Span], name: str) -> bool:
    """Whether the guard's operator is known and, for a built-in, its settings fit."""
    ref = block.ref
    if ref is None:
        return True
    registry = tools.registry
    where = block.ref_span or block.span
    if registry is not None and ref in registry:
        return True
    builtin = BUILTIN_GUARDS.get(ref)
    if builtin is None:
        if registry is None:
            return True  # checked when the agent is materialized with its registry
        known = (*BUILTIN_GUARDS, *registry)
        tools.error(f"guard {name!r} refers to operator {ref!r}, which is neither a built-in "
                     f"guard nor in the registry{did_you_mean_hint(ref, known)}", where)
        return False
    problems = builtin.option_problems(options)
    for key, problem in problems.items():
        message = f"{ref}: {problem}" if not key else f"{ref} setting {key!r}: {problem}"
        tools.error(message, spans.get(key, where), width=len(key) if key in spans else None)
    return not problems


def _own_problem(key: str, value: Any, kind: GuardKind) -> str | None:
    if key == "action":
        if value not in GUARD_ACTIONS:
            return f'action must be "trip" or "reject", got {value!r}'
        if value == "reject" and kind == "input":
            return ('an input guard cannot reject (there is nothing for the model to redo): '
                    'use action = "trip"')
    if key == "on_error" and value not in GUARD_ON_ERROR:
        return f'on_error must be "trip" or "pass", got {value!r}'
    if key == "parallel":
        if not isinstance(value, bool):
            return f"parallel must be true or false, got {value!r}"
        if value and kind != "input":
            return "only input guards run in parallel with the model call"
    return None


def _variable_problem(kind: GuardKind) -> Callable[[str], str | None]:
    readable = GUARD_VARIABLES[kind]

    def problem(name: str) -> str | None:
        if name in readable:
            return None
        hint = did_you_mean_hint(name, readable,
                                 otherwise=f" (a {kind} guard reads {', '.join(readable)})")
        return f"unknown variable {name!r} in the when of a {kind} guard{hint}"

    return problem
