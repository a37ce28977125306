"""A tool round with the tool-call guards in front (see :mod:`bloge.agent.loop.guards`).

A refused call is not run: the model reads the refusal as the call's error result. A tripped
guard stops the run before any call of the round runs, and a recorded run's ledger is told
that none of them ran, so that a resume never takes them for calls of unknown outcome.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from bloge.agent.loop.guards import GuardTripped, RunGuards
from bloge.agent.loop.tools import ToolOutcome
from bloge.llm.messages import ToolCall

if TYPE_CHECKING:
    from bloge.agent.loop.engine import ToolRound
    from bloge.agent.loop.observer import RecordedResult, RunObserver


class GuardedRound:
    """``inner`` with the tool-call guards of ``guards`` in front (see the module docs)."""

    __slots__ = ("_guards", "_inner", "_observer")

    def __init__(self, inner: ToolRound, guards: RunGuards,
                 observer: RunObserver | None) -> None:
        self._inner = inner
        self._guards = guards
        self._observer = observer

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        refused: dict[str, ToolOutcome] = {}
        for call in calls:
            if recorded is not None and call.id in recorded:
                continue  # it ran before the run stopped: its guards passed it then
            try:
                content = await self._guards.refusal(turn, call)
            except GuardTripped as tripped:
                await self._not_run(turn, calls, recorded, tripped)
                raise
            if content is not None:
                refused[call.id] = ToolOutcome(call, success=False, content=content)
        if not refused:
            return await self._inner.run(turn, calls, recorded=recorded)
        allowed = [call for call in calls if call.id not in refused]
        if self._observer is not None:
            left = len(calls)
            for outcome in refused.values():
                left -= 1
                await self._observer.tool_completed(turn, outcome, running=left)
        ran = iter(await self._inner.run(turn, allowed, recorded=recorded) if allowed else ())
        return [refused[call.id] if call.id in refused else next(ran) for call in calls]

    async def _not_run(self, turn: int, calls: Sequence[ToolCall],
                       recorded: Mapping[str, RecordedResult] | None,
                       tripped: GuardTripped) -> None:
        """Record that no call of the round ran (a recorded run resumed later must not take
        them for calls that may have run): each as a failure saying the guard stopped it."""
        if self._observer is None:
            return
        content = (f"Error: not run: the guard {tripped.guard.name!r} stopped the run before "
                   f"this call ran: {tripped.verdict.reason or 'it tripped'}")
        left = [call for call in calls if recorded is None or call.id not in recorded]
        for index, call in enumerate(left, start=1):
            await self._observer.tool_completed(turn, ToolOutcome(call, success=False,
                                                                  content=content),
                                                running=len(left) - index)
