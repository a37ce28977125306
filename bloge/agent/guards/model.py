"""Guards: what one is (:class:`Guard`), what it is asked (:class:`GuardCheck`), what it answers
(:class:`GuardVerdict`) and how an agent declares one (:class:`GuardDef`).

A guard looks at one thing a run is about to act on — the user's input (``input``), the
model's final answer (``output``) or one tool call (``tool_call``) — and says whether it
trips. A tripped guard either stops the run (``action = "trip"``, a
:class:`~bloge.agent.loop.errors.GuardrailTrippedError`) or refuses that one thing and lets
the model go on (``action = "reject"``: a refused tool call becomes an error tool result, a
refused answer a request for another one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, get_args

from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.dsl.expression import Expression

GuardKind: TypeAlias = Literal["input", "output", "tool_call"]
GUARD_KINDS: tuple[GuardKind, ...] = get_args(GuardKind)
#: ``trip`` stops the run; ``reject`` refuses the call or the answer and goes on.
GuardAction: TypeAlias = Literal["trip", "reject"]
GUARD_ACTIONS: tuple[GuardAction, ...] = get_args(GuardAction)
#: What a guard that raises counts as: ``trip`` (fail closed, the default) or ``pass``.
GuardOnError: TypeAlias = Literal["trip", "pass"]
GUARD_ON_ERROR: tuple[GuardOnError, ...] = get_args(GuardOnError)

#: What the ``when`` expression of each kind of guard may read.
GUARD_VARIABLES: Mapping[GuardKind, tuple[str, ...]] = {
    "input": ("input", "turn"),
    "output": ("content", "finish_reason", "turn"),
    "tool_call": ("tool_name", "tool_args", "call_id", "turn"),
}


@dataclass(frozen=True, slots=True)
class GuardCheck:
    """What a guard is asked about. ``text`` is what it reads: the user's new input
    (``input``), the model's answer (``output``), the call's arguments as JSON text
    (``tool_call``, whose ``tool_name``, ``tool_args`` — parsed, ``None`` when they are not a
    JSON object — and ``call_id`` are set too). ``options`` are the guard block's other
    settings (``guard output x : MyGuard { threshold = 3 }``)."""

    kind: GuardKind
    guard: str
    agent_id: str
    turn: int
    text: str
    tool_name: str | None = None
    tool_args: Mapping[str, Any] | None = None
    call_id: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def scope(self) -> dict[str, Any]:
        """What a ``when`` expression reads, by kind (see :data:`GUARD_VARIABLES`)."""
        if self.kind == "input":
            return {"input": self.text, "turn": self.turn}
        if self.kind == "output":
            return {"content": self.text, "finish_reason": None, "turn": self.turn}
        return {"tool_name": self.tool_name, "tool_args": self.tool_args,
                "call_id": self.call_id, "turn": self.turn}


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """A guard's answer: whether it ``tripped``, why (``reason``, told to the model when the
    guard rejects, and recorded), and ``findings``: what it found, by kind, as counts or
    short labels — never the offending text itself (verdicts are recorded)."""

    tripped: bool
    reason: str = ""
    findings: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def passed(cls) -> GuardVerdict:
        return _PASSED

    @classmethod
    def trip(cls, reason: str, **findings: Any) -> GuardVerdict:
        return cls(tripped=True, reason=reason, findings=findings)

    def to_dict(self) -> dict[str, Any]:
        return {"tripped": self.tripped, "reason": self.reason, "findings": dict(self.findings)}


_PASSED = GuardVerdict(tripped=False)

#: What a guard may return: a verdict, or a bool saying whether it trips (``None``: it does not).
GuardResult: TypeAlias = GuardVerdict | bool | None


class Guard(Protocol):
    """A guard: an operator whose input is a :class:`GuardCheck`. It may be sync (it runs on a
    worker thread) or async; a plain function ``fn(check)`` or ``fn(check, ctx)`` is one too.
    What it raises counts as a trip unless the guard (or ``bloge.guards.fail-open``) says
    ``on_error = "pass"``."""

    def execute(self, check: GuardCheck,
                ctx: OperatorContext) -> GuardResult | Awaitable[GuardResult]:
        """Whether ``check`` trips this guard, and why."""
        ...


@dataclass(frozen=True, slots=True)
class GuardDef:
    """One guard of an agent.

    It checks with ``check`` (a :class:`Guard` object or function), else with the registered
    operator ``operator_ref``, else it trips when its ``when`` expression holds. With a check
    too, ``when`` says which things it looks at (``when = tool_name == "refund"``).
    ``parallel`` (input guards only) runs it alongside the model call: a trip cancels the call
    or discards its answer before anything acts on it. ``on_error`` is what a guard that
    raises counts as (``None``: ``bloge.guards.fail-open``'s choice, ``trip`` by default).
    ``options`` reach ``check`` as :attr:`GuardCheck.options`.
    """

    name: str
    kind: GuardKind
    check: object | None = None
    operator_ref: str | None = None
    when: Expression | None = None
    action: GuardAction = "trip"
    parallel: bool = False
    on_error: GuardOnError | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = guard_problems(self)
        if problems:
            raise BlogeUsageError(f"invalid guard {self.name!r}: " + "; ".join(problems))

    @property
    def label(self) -> str:
        """``<kind> <name>``, as errors and the journal name it."""
        return f"{self.kind} guard {self.name!r}"


def guard_problems(guard: GuardDef) -> list[str]:
    """Every rule ``guard`` breaks (the DSL compiler reports the same ones, located)."""
    problems: list[str] = []
    if not isinstance(guard.name, str) or not guard.name.strip():
        problems.append(f"a guard's name must be a non-empty string, got {guard.name!r}")
    if guard.kind not in GUARD_KINDS:
        problems.append(f"kind must be one of {', '.join(GUARD_KINDS)}, got {guard.kind!r}")
    if guard.action not in GUARD_ACTIONS:
        problems.append(f"action must be one of {', '.join(GUARD_ACTIONS)}, got {guard.action!r}")
    if guard.on_error is not None and guard.on_error not in GUARD_ON_ERROR:
        problems.append(f"on_error must be one of {', '.join(GUARD_ON_ERROR)}, "
                        f"got {guard.on_error!r}")
    if guard.check is None and guard.operator_ref is None and guard.when is None:
        problems.append("a guard needs something to check with: a check, an operator or a "
                        "when expression")
    if guard.check is not None and guard.operator_ref is not None:
        problems.append("a guard checks with a check or an operator, not both")
    if guard.parallel and guard.kind != "input":
        problems.append("only input guards run in parallel with the model call")
    if guard.action == "reject" and guard.kind == "input":
        problems.append('an input guard cannot reject (there is nothing for the model to '
                        'redo): use action = "trip"')
    when: object = guard.when
    if when is not None and not isinstance(when, Expression):
        problems.append("when must be an Expression")
    return problems


def _guard(kind: GuardKind, check: object | None, *, name: str | None, when: str | Expression |
           None, action: GuardAction, parallel: bool, on_error: GuardOnError | None,
           options: Mapping[str, Any] | None) -> GuardDef:
    if isinstance(when, str):
        from bloge.agent.functions import agent_functions  # noqa: PLC0415 -- the DSL's functions, when used

        when = Expression.compile(when, filename=f"<{kind} guard when>",
                                  functions=agent_functions())
        unknown = sorted(when.variables - set(GUARD_VARIABLES[kind]))
        if unknown:
            raise BlogeUsageError(f"a {kind} guard's when cannot read {', '.join(unknown)}; it "
                                  f"reads {', '.join(GUARD_VARIABLES[kind])}")
    if name is None:
        name = ((getattr(check, "__name__", None) or type(check).__name__)
                if check is not None else kind)
    return GuardDef(name, kind, check=check, when=when, action=action, parallel=parallel,
                    on_error=on_error, options=dict(options or {}))


def input_guard(check: object | None = None, *, name: str | None = None,
                when: str | Expression | None = None, parallel: bool = False,
                on_error: GuardOnError | None = None,
                options: Mapping[str, Any] | None = None) -> GuardDef:
    """A guard on the user's input (see :class:`GuardDef`); ``when`` may be DSL text."""
    return _guard("input", check, name=name, when=when, action="trip", parallel=parallel,
                  on_error=on_error, options=options)


def output_guard(check: object | None = None, *, name: str | None = None,
                 when: str | Expression | None = None, action: GuardAction = "trip",
                 on_error: GuardOnError | None = None,
                 options: Mapping[str, Any] | None = None) -> GuardDef:
    """A guard on the model's final answer (see :class:`GuardDef`)."""
    return _guard("output", check, name=name, when=when, action=action, parallel=False,
                  on_error=on_error, options=options)


def tool_call_guard(check: object | None = None, *, name: str | None = None,
                    when: str | Expression | None = None, action: GuardAction = "trip",
                    on_error: GuardOnError | None = None,
                    options: Mapping[str, Any] | None = None) -> GuardDef:
    """A guard on each tool call, before it runs (see :class:`GuardDef`)."""
    return _guard("tool_call", check, name=name, when=when, action=action, parallel=False,
                  on_error=on_error, options=options)
