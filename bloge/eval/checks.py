"""The checks a case expects of its run: on the answer, the trajectory, the cost, by a judge
or by an evaluator of the project's. Each is a value with one coroutine,
``evaluate(seen, env) -> Verdict``; the dataset's ``expect:`` list is read into them by
:mod:`bloge.eval.dataset`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bloge.core.codec import DEFAULT_CODEC
from bloge.eval.matchers import Fields
from bloge.eval.observed import Observation, ObservedCall, Verdict

if TYPE_CHECKING:
    from bloge.eval.environment import CheckEnv

Order = Literal["exact", "in-order", "any"]


class Check(Protocol):
    """One expectation of a case."""

    @property
    def name(self) -> str:
        """What the check is, as the results name it (``contains``, ``tools``, …)."""
        ...

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        """The verdict on one run of the case."""
        ...


def _answer(seen: Observation) -> str:
    return seen.answer or ""


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass(frozen=True, slots=True)
class AnswerContains:
    text: str
    name: str = "contains"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        found = self.text.casefold() in _answer(seen).casefold()
        return Verdict.of(self.name, passed=found, reason=(
            f"the answer does not contain {self.text!r}: {_short(_answer(seen))!r}"))


@dataclass(frozen=True, slots=True)
class AnswerMatches:
    pattern: re.Pattern[str]
    name: str = "regex"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        found = self.pattern.search(_answer(seen)) is not None
        return Verdict.of(self.name, passed=found, reason=(
            f"the answer does not match /{self.pattern.pattern}/: {_short(_answer(seen))!r}"))


@dataclass(frozen=True, slots=True)
class AnswerEquals:
    text: str
    name: str = "equals"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        same = _answer(seen).strip() == self.text.strip()
        return Verdict.of(self.name, passed=same, reason=(
            f"the answer is {_short(_answer(seen))!r}, not {_short(self.text)!r}"))


@dataclass(frozen=True, slots=True)
class AnswerSchema:
    """The typed output (else the answer read as JSON) is valid under a JSON schema."""

    schema: Mapping[str, Any]
    name: str = "json-schema"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        import jsonschema  # noqa: PLC0415 -- the extra's package, checked when the dataset loads

        value = seen.output
        if value is None:
            try:
                value = DEFAULT_CODEC.decode(_answer(seen))
            except ValueError:
                return Verdict.of(self.name, passed=False, reason="the answer is not JSON")
        errors = sorted(jsonschema.Draft202012Validator(self.schema).iter_errors(value),
                        key=lambda e: list(e.absolute_path))
        if not errors:
            return Verdict.of(self.name, passed=True)
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "the value"
        return Verdict.of(self.name, passed=False, reason=f"{where}: {first.message}")


@dataclass(frozen=True, slots=True)
class OutputFields:
    """Fields of the typed output match."""

    fields: Fields
    name: str = "output"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        if seen.output is None:
            return Verdict.of(self.name, passed=False, reason="the run gave no typed output")
        problem = self.fields.mismatch(seen.output)
        return Verdict.of(self.name, passed=problem is None, reason=f"output: {problem}")


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    tool: str
    arguments: Fields | None = None

    def matches(self, call: ObservedCall) -> bool:
        return call.name == self.tool and (self.arguments is None
                                           or self.arguments.matches(call.arguments))

    def describe(self) -> str:
        return self.tool if self.arguments is None else f"{self.tool}{self.arguments.describe()}"


@dataclass(frozen=True, slots=True)
class ToolsCalled:
    """The run called these tools: exactly these in this order (``exact``), these in this
    order among others (``in-order``), or each of these in any order (``any``)."""

    calls: tuple[ExpectedCall, ...]
    order: Order = "exact"
    name: str = "tools"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        made = seen.calls
        shown = ", ".join(_call_text(c) for c in made) or "no tool"
        expected = ", ".join(c.describe() for c in self.calls) or "no tool"
        if self.order == "exact":
            ok = len(made) == len(self.calls) and all(
                e.matches(c) for e, c in zip(self.calls, made, strict=True))
            return Verdict.of(self.name, passed=ok,
                              reason=f"expected the calls {expected}; the run made {shown}")
        if self.order == "in-order":
            remaining = iter(made)
            ok = all(any(e.matches(c) for c in remaining) for e in self.calls)
            return Verdict.of(self.name, passed=ok, reason=(
                f"expected the calls {expected} in this order; the run made {shown}"))
        missing = [e.describe() for e in self.calls if not any(e.matches(c) for c in made)]
        return Verdict.of(self.name, passed=not missing,
                          reason=f"no call {', '.join(missing)}; the run made {shown}")


def _call_text(call: ObservedCall) -> str:
    return f"{call.name}({_short(DEFAULT_CODEC.encode_lenient(call.arguments), 60)})"


@dataclass(frozen=True, slots=True)
class NeverCalled:
    tools: tuple[str, ...]
    name: str = "not-called"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        called = sorted({c.name for c in seen.calls if c.name in self.tools})
        return Verdict.of(self.name, passed=not called,
                          reason=f"the run called {', '.join(called)}")


@dataclass(frozen=True, slots=True)
class AtMost:
    """A run's measure stays at or under a limit: ``turns``, ``tokens``, ``usd``,
    ``tool-calls`` or ``seconds``."""

    measure: Literal["turns", "tokens", "usd", "tool-calls", "seconds"]
    limit: float

    @property
    def name(self) -> str:
        return f"max-{self.measure}"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        value = measure_of(seen, self.measure)
        return Verdict.of(self.name, passed=value <= self.limit,
                          reason=f"{self.measure}: {value:g} > {self.limit:g}")


def measure_of(seen: Observation, measure: str) -> float:
    match measure:
        case "turns":
            return seen.turns
        case "tokens":
            return seen.tokens
        case "usd":
            return seen.usage.cost_usd
        case "tool-calls":
            return len(seen.calls)
        case _:
            return seen.seconds


@dataclass(frozen=True, slots=True)
class ExitReason:
    reason: str
    name: str = "exit-reason"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        return Verdict.of(self.name, passed=seen.exit_reason == self.reason,
                          reason=f"the run ended with {seen.exit_reason!r}, not {self.reason!r}")


@dataclass(frozen=True, slots=True)
class JudgeRubric:
    """An LLM judge scores the answer against ``rubric``; it passes at ``min_score``."""

    rubric: str
    min_score: float = 0.5
    model: str | None = None
    name: str = "judge"

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        return await env.judged(self, seen)


@dataclass(frozen=True, slots=True)
class CustomCheck:
    """An evaluator of the project's, by name: a Python function given to the run, or an
    operator of the registry."""

    evaluator: str
    arguments: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.evaluator

    async def evaluate(self, seen: Observation, env: CheckEnv) -> Verdict:
        return await env.evaluated(self, seen)

