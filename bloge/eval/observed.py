"""What a case's run came to (:class:`Observation`) and what a check says of it
(:class:`Verdict`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bloge.agent import AgentOutput, AgentUsage
from bloge.core.codec import DEFAULT_CODEC
from bloge.llm import LlmMessage


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """One tool call of the run, in the model's order: its parsed ``arguments`` (the raw
    text when they are not JSON) and the tool message the model got."""

    name: str
    arguments: Any
    success: bool
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "success": self.success}


@dataclass(frozen=True, slots=True)
class Observation:
    """One run of a case: its answer (``None`` when it failed), typed output, tool calls,
    turns, usage, wall time and how it ended."""

    answer: str | None
    output: Any = None
    calls: tuple[ObservedCall, ...] = ()
    turns: int = 0
    usage: AgentUsage = field(default_factory=AgentUsage)
    seconds: float = 0.0
    exit_reason: str = "stop"
    error: str | None = None
    run_id: str | None = None

    @classmethod
    def of_output(cls, output: AgentOutput, *, seconds: float, opened: int) -> Observation:
        """The run that answered ``output``; its transcript's first ``opened`` messages are
        what it started from (their tool calls are not the run's)."""
        return cls(output.content, output.output_data, calls_in(output.messages[opened:]),
                   output.turns_used, output.usage, seconds, output.exit_reason,
                   run_id=output.run_id)

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens


def calls_in(messages: tuple[LlmMessage, ...]) -> tuple[ObservedCall, ...]:
    """The tool calls of a transcript with their results, in order."""
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    found: list[ObservedCall] = []
    for message in messages:
        for call in message.tool_calls:
            answer = results.get(call.id)
            found.append(ObservedCall(
                call.name, arguments_of(call.arguments),
                answer is not None and not answer.is_error,
                "" if answer is None else answer.content))
    return tuple(found)


def arguments_of(text: str) -> Any:
    try:
        return DEFAULT_CODEC.decode(text or "{}")
    except ValueError:
        return text


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one check says: passed or not, a score in [0, 1] (1 or 0 for a yes/no check),
    and why when it failed (or what the judge said)."""

    check: str
    passed: bool
    score: float
    reason: str = ""

    @classmethod
    def of(cls, check: str, *, passed: bool, reason: str = "") -> Verdict:
        """A yes/no verdict: score 1 or 0, ``reason`` kept only when it failed."""
        return cls(check, passed=passed, score=1.0 if passed else 0.0,
                   reason="" if passed else reason)

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "passed": self.passed, "score": self.score,
                "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(str(data["check"]), passed=bool(data["passed"]),
                   score=float(data["score"]), reason=str(data.get("reason", "")))
