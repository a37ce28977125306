"""Tools replayed from a case's fixtures: the :class:`~bloge.agent.runtime.RunEffects` of an
eval run whose tools must not run (their side effects, their flakiness). The model calls stay
the engine's; each call of a tool round is answered by the fixture of its tool whose
arguments are equal, else by that tool's next unused fixture, else with an error the model
sees (a call the recording never made)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.agent import HandoffPayload
from bloge.agent.runtime import ModelCall, RecordedResult, RunObserver, ToolOutcome, ToolRound
from bloge.core.codec import DEFAULT_CODEC
from bloge.eval.dataset import Fixture
from bloge.eval.observed import arguments_of
from bloge.llm import ToolCall


class ReplayEffects:
    """Runs a recorded run's tool rounds from ``fixtures``, reporting each call to the run's
    ``observer`` as the engine's own rounds do (the run's ledger holds the replayed calls)."""

    __slots__ = ("_tools",)

    def __init__(self, fixtures: Sequence[Fixture], observer: RunObserver) -> None:
        self._tools = ReplayRound(fixtures, observer)

    @property
    def call_model(self) -> ModelCall | None:
        return None

    @property
    def tools(self) -> ToolRound:
        return self._tools

    async def handed_to(self, handoff: HandoffPayload) -> ReplayEffects:
        """The agent taking over replays its tools from the same fixtures (they are the
        run's, whichever agent called them)."""
        return self


class ReplayRound:
    """A :class:`~bloge.agent.runtime.ToolRound` answered from fixtures."""

    __slots__ = ("_fixtures", "_observer", "_used")

    def __init__(self, fixtures: Sequence[Fixture], observer: RunObserver) -> None:
        self._fixtures = tuple(fixtures)
        self._observer = observer
        self._used: set[int] = set()

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        outcomes = []
        for index, call in enumerate(calls):
            outcome = self._answer(call)
            outcomes.append(outcome)
            await self._observer.tool_completed(turn, outcome,
                                                running=len(calls) - index - 1)
        return outcomes

    def _answer(self, call: ToolCall) -> ToolOutcome:
        arguments = arguments_of(call.arguments)
        fixture = self._take(call.name, arguments)
        if fixture is None:
            return ToolOutcome(call, success=False, arguments=arguments, content=(
                f"Error: tool {call.name!r} has no recorded result for the arguments "
                f"{call.arguments} (the eval replays fixtures; add one, or run the case with "
                "real tools)"))
        result = fixture.result
        content = result if isinstance(result, str) else DEFAULT_CODEC.encode_lenient(result)
        return ToolOutcome(call, fixture.success, content,
                           result if fixture.success else None, arguments)

    def _take(self, tool: str, arguments: Any) -> Fixture | None:
        """The fixture answering a call: an unused one with equal arguments, the tool's next
        unused one, or (a call made again) a used one with equal arguments."""
        same_tool = [(i, f) for i, f in enumerate(self._fixtures) if f.tool == tool]
        unused = [(i, f) for i, f in same_tool if i not in self._used]
        chosen = next(((i, f) for i, f in unused if f.arguments == arguments), None) \
            or next(iter(unused), None) \
            or next(((i, f) for i, f in same_tool if f.arguments == arguments), None)
        if chosen is None:
            return None
        self._used.add(chosen[0])
        return chosen[1]
