"""A typed run's answers: checked against the schema, sent back with their problems while
repairs remain, and streamed as ``Partial`` chunks as they are written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bloge.agent.loop.chunks import AgentStreamChunk, Partial, Token
from bloge.agent.output.partial import partial_value
from bloge.agent.output.problems import OutputProblem
from bloge.agent.output.schema import OutputSchema

Sink = Callable[[AgentStreamChunk], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Verdict:
    """An answer judged: its ``value`` when it fits, else its ``problems``."""

    value: Any = None
    problems: tuple[OutputProblem, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.problems


@dataclass(slots=True)
class TypedAnswers:
    """The run's typed answers so far; ``repairs`` counts the answers sent back."""

    schema: OutputSchema
    repairs: int = 0

    def judge(self, content: str, finish_reason: str = "stop") -> Verdict:
        """``content`` parsed and validated; an answer cut off by the token limit
        (``finish_reason`` ``length``) says so first, for that is what to mend."""
        value, problems = self.schema.parse(content)
        if not problems:
            return Verdict(value)
        if finish_reason == "length":
            problems.insert(0, OutputProblem("$", "a complete answer",
                                             "one cut off at the max_tokens limit: answer "
                                             "shorter"))
        return Verdict(problems=tuple(problems))

    def may_repair(self) -> bool:
        """Whether another invalid answer may go back to the model (and count it)."""
        if self.repairs >= self.schema.max_repairs:
            return False
        self.repairs += 1
        return True


@dataclass(slots=True)
class PartialSink:
    """Passes every chunk to ``sink`` and, after each token, a ``Partial`` with the answer's
    fields so far when they changed."""

    sink: Sink
    _turn: int = 0
    _text: list[str] = field(default_factory=list)
    _last: Any = None

    async def __call__(self, chunk: AgentStreamChunk) -> None:
        await self.sink(chunk)
        if not isinstance(chunk, Token):
            return
        if chunk.turn_number != self._turn:
            self._turn, self._text, self._last = chunk.turn_number, [], None
        self._text.append(chunk.text)
        value = partial_value("".join(self._text))
        if isinstance(value, dict) and value != self._last:
            self._last = value
            await self.sink(Partial(value, chunk.turn_number))
