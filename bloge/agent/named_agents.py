"""Agents a DSL file names — the agent a sub-agent's tool asks (:mod:`bloge.agent.agent_calls`),
the one a handoff hands over to (:mod:`bloge.agent.handoffs`) — each kept with where it is
written, so that a name no agent has is reported there once every file is compiled (one file
may name an agent of another).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from bloge.core.errors import CompileError
from bloge.core.suggest import did_you_mean_hint


@dataclass(frozen=True, slots=True)
class Where:
    """A place in a DSL file (``width`` characters from ``line:column``), kept to locate an
    error found once every agent is known."""

    filename: str
    line: int
    column: int
    source_line: str | None
    width: int = 1

    def error(self, message: str) -> CompileError:
        """A :class:`~bloge.CompileError` saying ``message`` here."""
        return CompileError(message, filename=self.filename, line=self.line,
                            column=self.column, source_line=self.source_line, width=self.width)


def unknown_agent(agent: str, known: Collection[str]) -> str | None:
    """``None`` when ``agent`` is one of ``known``; else the "did you mean" hint that ends
    the error saying so (``"; did you mean 'x'?"``, or ``""``)."""
    return None if agent in known else did_you_mean_hint(agent, sorted(known))
