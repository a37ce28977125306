"""Value matchers, for tool arguments and typed-output fields: a plain value is compared for
equality; ``{contains: …}``, ``{regex: …}``, ``{one-of: […]}``, ``{any: true}`` match more
loosely; a mapping of other keys matches a mapping's listed keys (the others are free)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bloge.core.suggest import did_you_mean_hint

OPERATORS = ("contains", "regex", "one-of", "any", "equals")


class Matcher(Protocol):
    def matches(self, value: Any) -> bool: ...

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Equals:
    expected: Any

    def matches(self, value: Any) -> bool:
        return bool(value == self.expected)

    def describe(self) -> str:
        return repr(self.expected)


@dataclass(frozen=True, slots=True)
class Contains:
    text: str

    def matches(self, value: Any) -> bool:
        if isinstance(value, str):
            return self.text.casefold() in value.casefold()
        if isinstance(value, Sequence):
            return self.text in value
        return False

    def describe(self) -> str:
        return f"containing {self.text!r}"


@dataclass(frozen=True, slots=True)
class Regex:
    pattern: re.Pattern[str]

    def matches(self, value: Any) -> bool:
        return isinstance(value, str) and self.pattern.search(value) is not None

    def describe(self) -> str:
        return f"matching /{self.pattern.pattern}/"


@dataclass(frozen=True, slots=True)
class OneOf:
    choices: tuple[Any, ...]

    def matches(self, value: Any) -> bool:
        return value in self.choices

    def describe(self) -> str:
        return f"one of {list(self.choices)!r}"


@dataclass(frozen=True, slots=True)
class Anything:
    def matches(self, value: Any) -> bool:
        return value is not None

    def describe(self) -> str:
        return "any value"


@dataclass(frozen=True, slots=True)
class Fields:
    """A mapping whose listed keys match (its other keys are free)."""

    fields: tuple[tuple[str, Matcher], ...]

    def matches(self, value: Any) -> bool:
        return self.mismatch(value) is None

    def mismatch(self, value: Any) -> str | None:
        """Why ``value`` does not match, or ``None``."""
        if not isinstance(value, Mapping):
            return f"expected an object, got {value!r}"
        for name, matcher in self.fields:
            if name not in value:
                return f"{name} is missing"
            if not matcher.matches(value[name]):
                return f"{name} is {value[name]!r}, not {matcher.describe()}"
        return None

    def describe(self) -> str:
        return "{" + ", ".join(f"{n}: {m.describe()}" for n, m in self.fields) + "}"


class MatcherError(ValueError):
    """A matcher that cannot be built; the message says why."""


def matcher_of(value: Any) -> Matcher:
    """The matcher ``value`` declares (see the module docs)."""
    if isinstance(value, Mapping):
        if len(value) == 1:
            ((name, operand),) = value.items()
            if name in OPERATORS:
                return _operator(str(name), operand)
            _refuse_misspelt(str(name))
        return fields_of(value)
    return Equals(value)


def _refuse_misspelt(name: str) -> None:
    """A one-key mapping whose key is nearly a matcher's is a typo far more often than a field
    of that name: matched as a field, ``{contians: Paris}`` would fail every run, unexplained."""
    hint = did_you_mean_hint(name, OPERATORS, cutoff=0.7)
    if hint:
        raise MatcherError(f"{{{name}: …}} is no matcher{hint} (to match a field named "
                           f"{name!r}, write {{equals: {{{name}: …}}}})")


def fields_of(value: Mapping[Any, Any]) -> Fields:
    return Fields(tuple((str(name), matcher_of(item)) for name, item in value.items()))


def _operator(name: str, operand: Any) -> Matcher:
    match name:
        case "contains":
            if not isinstance(operand, str):
                raise MatcherError(f"contains takes text, got {operand!r}")
            return Contains(operand)
        case "regex":
            return Regex(compiled(operand))
        case "one-of":
            if not isinstance(operand, list):
                raise MatcherError(f"one-of takes a list, got {operand!r}")
            return OneOf(tuple(operand))
        case "any":
            return Anything()
        case _:
            return Equals(operand)


def compiled(pattern: Any) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise MatcherError(f"a regex is text, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise MatcherError(f"invalid regex {pattern!r}: {exc}") from None
