"""What is wrong with a model's typed answer: located problems, and the error a run ends with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.errors import AgentRunError

#: The exit reason of a run whose answers never fit its schema.
OUTPUT_INVALID = "output_invalid"

#: How much of a wrong value a problem quotes: enough to recognise it, never a whole document.
_GOT_LIMIT = 80


@dataclass(frozen=True, slots=True)
class OutputProblem:
    """One mismatch between an answer and its schema: where (``$.items[2].name``), what the
    schema expected there, and what the answer held (quoted, shortened)."""

    path: str
    expected: str
    got: str

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected}, got {self.got}"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "expected": self.expected, "got": self.got}


def quoted(value: object) -> str:
    """``value`` as the model wrote it (JSON), shortened to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _GOT_LIMIT else text[:_GOT_LIMIT - 1] + "…"


def repair_prompt(problems: Sequence[OutputProblem]) -> str:
    """The message that sends an invalid answer back to the model."""
    lines = "\n".join(f"- {problem}" for problem in problems)
    return ("Your answer does not match the required output schema:\n" + lines +
            "\nAnswer again with only a JSON value that matches the schema.")


class OutputValidationError(AgentRunError):
    """The model's answer still failed the agent's output schema after ``repairs`` repair
    turns (the setting ``bloge.output.max-repairs``, or ``max_turns`` ran out first).
    ``problems`` are those of its last answer; ``content`` is that answer's text."""

    def __init__(self, *, agent_id: str, problems: Sequence[OutputProblem], content: str,
                 repairs: int, checkpoint: AgentCheckpoint) -> None:
        self.problems = tuple(problems)
        self.content = content
        self.repairs = repairs
        listed = "; ".join(str(p) for p in self.problems[:5])
        super().__init__(
            f"agent {agent_id!r} gave no answer matching its output schema after {repairs} "
            f"repair turn(s): {listed}",
            agent_id=agent_id, checkpoint=checkpoint, exit_reason=OUTPUT_INVALID,
        )
