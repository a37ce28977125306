"""A tool round whose handoff calls the loop answers itself (see :mod:`bloge.agent.handoffs`).

A handoff is not an operator: its call is answered here, at once, and never reaches the
guards, the budget or the dispatcher. The first handoff of the round is taken, its tool message
naming the agent that takes over; any other handoff of the round is refused. A call the run's
ledger answered already (a resumed round) keeps its recorded answer, and one it did not is
answered again: answering a handoff has no effect outside the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from bloge.agent.handoffs import HandoffDef, refused_message, transfer_message
from bloge.agent.loop.steps import handoff_of
from bloge.agent.loop.tools import ToolOutcome
from bloge.llm.messages import ToolCall

if TYPE_CHECKING:
    from bloge.agent.loop.engine import ToolRound
    from bloge.agent.loop.observer import RecordedResult, RunObserver


class HandoffRound:
    """``inner`` for a round's other calls; the handoff calls of ``handoffs`` (by tool name)
    answered here, each told to ``observer``'s ledger."""

    __slots__ = ("_handoffs", "_inner", "_observer")

    def __init__(self, inner: ToolRound, handoffs: Mapping[str, HandoffDef],
                 observer: RunObserver | None) -> None:
        self._inner = inner
        self._handoffs = handoffs
        self._observer = observer

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        taken = handoff_of(calls, dict(self._handoffs))
        if taken is None:
            return await self._inner.run(turn, calls, recorded=recorded)
        answered = {call.id: self._answer(call, taken, recorded)
                    for call in calls if call.name in self._handoffs}
        others = [call for call in calls if call.id not in answered]
        if self._observer is not None:
            left = len(calls)
            for call_id, outcome in answered.items():
                left -= 1
                if recorded is None or call_id not in recorded:
                    await self._observer.tool_completed(turn, outcome, running=left)
        ran = iter(await self._inner.run(turn, others, recorded=recorded) if others else ())
        return [answered[call.id] if call.id in answered else next(ran) for call in calls]

    @staticmethod
    def _answer(call: ToolCall, taken: tuple[ToolCall, HandoffDef],
                recorded: Mapping[str, RecordedResult] | None) -> ToolOutcome:
        known = None if recorded is None else recorded.get(call.id)
        if known is not None:
            return ToolOutcome(call, success=known.success, content=known.content,
                               result=known.content)
        first, handoff = taken
        if call.id == first.id:
            content = transfer_message(handoff.agent_id)
            return ToolOutcome(call, success=True, content=content, result=content)
        return ToolOutcome(call, success=False, content=refused_message(first.name))
