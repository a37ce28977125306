"""The agent keywords with plain values, their types, defaults and limits.

One table serves the DSL compiler, ``AgentBuilder`` and ``AgentDef`` itself, so that a value
is judged the same way wherever it comes from.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bloge.core.suggest import did_you_mean_hint

DEFAULT_MAX_TURNS = 10
DEFAULT_STREAMING_BUFFER_CAPACITY = 16
MAX_TEMPERATURE = 2.0


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_seconds(value: Any) -> bool:
    return _is_number(value)


def _is_texts(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) and v for v in value)


def texts(value: Any) -> Any:
    """A list of strings (``["END"]`` in the DSL) as a tuple; other values unchanged."""
    return tuple(value) if isinstance(value, list) else value


def seconds(value: Any) -> Any:
    """A duration (``30s`` in the DSL) as float seconds; other values unchanged."""
    return value.total_seconds() if isinstance(value, dt.timedelta) else value


def describe_value(value: Any) -> str:
    """A value as an error message shows it: ``the string "6"``, ``the number 2.5``."""
    match value:
        case None:
            return "null"
        case bool():
            return "true" if value else "false"
        case str():
            return f"the string {value!r}"
        case int() | float():
            return f"the number {number_text(value)}"
        case list() | tuple():
            return "a list holding " + ", ".join(describe_value(v) for v in value[:3]) + (
                ", …" if len(value) > 3 else "") if value else "an empty list"
    return f"a {type(value).__name__}"


def number_text(value: float) -> str:
    """A number as a message shows it; an integer too long to print is described by size."""
    if isinstance(value, int) and value.bit_length() > _LONGEST_SHOWN_BITS:
        return f"{'-' if value < 0 else ''}(a number of over {_LONGEST_SHOWN_DIGITS} digits)"
    return str(value)


_LONGEST_SHOWN_BITS = 64
_LONGEST_SHOWN_DIGITS = 19
#: The longest duration a ``datetime.timedelta`` holds, in seconds.
MAX_SECONDS = dt.timedelta.max.total_seconds()


@dataclass(frozen=True, slots=True)
class Keyword:
    """One ``key = value`` keyword of an agent body."""

    name: str
    expects: str
    accepts: Callable[[Any], bool]
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    convert: Callable[[Any], Any] | None = None

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not acceptable, or ``None`` when it is."""
        if self.convert is not None:
            value = self.convert(value)
        if value is None:
            return None if self.nullable else f"{self.name} must be {self.expects}, got null"
        if not self.accepts(value):
            return f"{self.name} must be {self.expects}, got {describe_value(value)}"
        if self.minimum is not None and self.maximum is not None and not (
            self.minimum <= value <= self.maximum
        ):
            return (f"{self.name} must be between {self.minimum:g} and {self.maximum:g}, "
                    f"got {number_text(value)}")
        if self.minimum is not None and value < self.minimum:
            return f"{self.name} must be at least {self.minimum:g}, got {number_text(value)}"
        if self.accepts is _is_seconds and not value > 0:  # NaN is not positive either
            return f"{self.name} must be positive, got {number_text(value)} s"
        if self.maximum is not None and value > self.maximum:
            return f"{self.name} must be at most {self.maximum:g} s, got {number_text(value)} s"
        if isinstance(value, str) and not value.strip() and not self.nullable:
            return f"{self.name} must not be empty"
        return None

    def normalize(self, value: Any) -> Any:
        """The value as ``AgentDef`` stores it (a whole-number temperature becomes a float)."""
        if self.convert is not None:
            value = self.convert(value)
        if self.accepts in (_is_number, _is_seconds) and value is not None:
            return float(value)
        return value


KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        Keyword("model", "a string", lambda v: isinstance(v, str)),
        Keyword("system_prompt", "a string", lambda v: isinstance(v, str), nullable=True),
        Keyword("max_turns", "a whole number", _is_int, minimum=1),
        Keyword("max_tool_concurrency", "a whole number", _is_int, nullable=True, minimum=1),
        Keyword("temperature", "a number", _is_number, nullable=True, minimum=0.0,
                maximum=MAX_TEMPERATURE),
        Keyword("streaming", "true or false", lambda v: isinstance(v, bool)),
        Keyword("streaming_buffer_capacity", "a whole number", _is_int, minimum=1),
        Keyword("tool_timeout", "a duration such as 30s", _is_seconds, nullable=True,
                maximum=MAX_SECONDS, convert=seconds),
        Keyword("max_tokens", "a whole number", _is_int, nullable=True, minimum=1),
        Keyword("tool_choice", 'a string ("auto", "required", "none" or a tool\'s name)',
                lambda v: isinstance(v, str), nullable=True),
        Keyword("stop", "a list of non-empty strings", _is_texts, convert=texts),
        Keyword("seed", "a whole number", _is_int, nullable=True),
        Keyword("parallel_tool_calls", "true or false", lambda v: isinstance(v, bool),
                nullable=True),
        Keyword("fallback", "a list of model names", _is_texts, convert=texts),
    )
}

#: What ``tool_choice`` may be besides a tool's name.
TOOL_CHOICE_MODES = ("auto", "required", "none")


def fallback_problem(model: Any, fallback: Any) -> str | None:
    """Why ``fallback`` cannot follow ``model``: a model listed twice would be tried twice."""
    if not isinstance(fallback, tuple):
        return None
    listed = [model, *fallback]
    repeated = sorted({m for m in listed if listed.count(m) > 1})
    if repeated:
        return f"a model is listed twice among the model and its fallbacks: {', '.join(repeated)}"
    return None


def models_of(value: Any) -> tuple[Any, Any]:
    """``model = ["a", "b"]``: the model (``"a"``) and its fallbacks (``("b",)``); any other
    value is the model, with no fallbacks."""
    if isinstance(value, list | tuple) and value:
        return value[0], tuple(value[1:])
    return value, ()


def tool_choice_problem(choice: Any, tool_names: tuple[str, ...]) -> str | None:
    """Why ``choice`` cannot be the ``tool_choice`` of an agent with these tools, or ``None``:
    ``"required"`` needs a tool, and any other word must name one of them."""
    if not isinstance(choice, str) or choice in ("auto", "none"):
        return None
    if choice == "required":
        return None if tool_names else 'tool_choice = "required" needs a tool; the agent has none'
    if choice in tool_names:
        return None
    hint = did_you_mean_hint(choice, (*tool_names, *TOOL_CHOICE_MODES), otherwise=(
        f" (its tools: {', '.join(tool_names)})" if tool_names else " (it has no tools)"))
    return (f"tool_choice {choice!r} is not one of the agent's tools{hint}; tool_choice is "
            '"auto", "required", "none" or the name of one of its tools')


#: Every keyword of an agent body, for "did you mean" suggestions.
AGENT_BODY_WORDS = (*KEYWORDS, "memory", "exit_condition", "tool", "handoff", "output",
                    "guard")
TOOL_BODY_WORDS = ("description", "input", "timeout", "requires_approval", "parameters")
#: …and of a tool that asks a remote agent (``tool quote : a2a "<url>" { … }``).
REMOTE_TOOL_BODY_WORDS = (*TOOL_BODY_WORDS, "idempotent")
#: …and of a tool that asks another agent (``tool research : agent researcher { … }``).
AGENT_TOOL_BODY_WORDS = (*TOOL_BODY_WORDS, "context", "thread")
#: The protocols a remote agent's tool may speak (``tool <name> : <protocol> "<url>"``).
REMOTE_PROTOCOLS = ("a2a",)
#: JSON-schema types an external tool's ``parameters { name = "type" }`` may name (a
#: trailing ``?`` makes the argument optional).
PARAMETER_TYPES = ("string", "number", "integer", "boolean", "object", "array")
TOOL_TIMEOUT = Keyword("timeout", "a duration such as 30s", _is_seconds, nullable=True,
                       maximum=MAX_SECONDS, convert=seconds)

#: The variables an exit condition can read (appendix "Exit Condition").
EXIT_CONDITION_VARIABLES = (
    "finish_reason", "content", "turn", "tool_calls", "tool_results", "messages",
)


TOOL_ARGS_SCOPE = "tool_args is only in scope inside a tool's input { … } block"

#: The variables an ``input { … }`` binding can read: the model's arguments and the context
#: the agent runs in (its values by name: ``ctx.user``, ``ctx["user"]``).
INPUT_BINDING_VARIABLES = ("tool_args", "ctx")


def exit_condition_variable_problem(name: str) -> str | None:
    """Why an exit condition cannot read the variable ``name``, or ``None`` when it can."""
    if name in EXIT_CONDITION_VARIABLES:
        return None
    if name == "tool_args":
        return TOOL_ARGS_SCOPE
    hint = did_you_mean_hint(name, EXIT_CONDITION_VARIABLES,
                             otherwise=f" (available: {', '.join(EXIT_CONDITION_VARIABLES)})")
    return f"unknown variable {name!r} in exit_condition{hint}"


def input_binding_variable_problem(name: str, key: str) -> str | None:
    """Why the binding ``key`` of an ``input`` block cannot read the variable ``name``."""
    if name in INPUT_BINDING_VARIABLES:
        return None
    hint = did_you_mean_hint(name, INPUT_BINDING_VARIABLES, otherwise=(
        f"; an input binding reads the model's arguments as tool_args.<name> and the "
        f"context as ctx.<name>: did you mean tool_args.{name} or ctx.{name}?"))
    return f"unknown variable {name!r} in input binding {key!r}{hint}"


def memory_size_problem(function: str, meaning: str, value: Any) -> str | None:
    """Why ``value`` is not a valid size for ``function(n)``, or ``None``."""
    if not _is_int(value):
        return f"{function}(n) needs a whole number {meaning}, got {describe_value(value)}"
    if value < 1:
        return f"{function}(n) needs n >= 1, got {number_text(value)}"
    return None


def window_block_problem(size: Any, block: Any) -> str | None:
    """Why ``sliding_window(size, block)`` cannot move ``block`` messages at a time."""
    if not _is_int(block):
        return f"sliding_window(n, block) needs a whole number block, got {describe_value(block)}"
    if not 1 <= block <= size:
        return (f"sliding_window(n, block) needs a block between 1 and the window size {size}, "
                f"got {number_text(block)}")
    return None
