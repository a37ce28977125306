"""The loop's steps and the pure decisions between them.

``CallModel`` → (``RunTools`` | ``Finish``); ``RunTools`` → (``Finish`` | ``CallModel`` |
``OutOfTurns`` | ``HandOff``); ``HandOff`` continues the run with another agent's steps.
The engine performs the I/O of each step; what comes next is decided here, from values only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from bloge.agent.handoffs import HandoffDef
from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmResponse

STOP = "stop"
EXIT_CONDITION = "exit_condition"
MAX_TURNS = "max_turns"
ERROR = "error"
CANCELLED = "cancelled"
#: The run stopped in a tool round whose calls wait (for approval, or for results).
PAUSED = "paused"
#: A guard tripped and stopped the run (our addition).
GUARDRAIL = "guardrail"
#: A budget would have been exceeded by the next step (our addition).
BUDGET = "budget"


@dataclass(frozen=True, slots=True)
class CallModel:
    """Start turn ``turn``: ask the model."""

    turn: int


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run the tool calls ``response`` asked for in turn ``turn``."""

    turn: int
    response: LlmResponse


@dataclass(frozen=True, slots=True)
class Finish:
    """The loop is done; ``response`` is the last model answer."""

    exit_reason: str
    response: LlmResponse


@dataclass(frozen=True, slots=True)
class OutOfTurns:
    """Another model call is needed, but ``turns`` turns are all ``max_turns`` allows."""

    turns: int


@dataclass(frozen=True, slots=True)
class HandOff:
    """The tool round of turn ``turn`` handed the conversation over with ``call`` of
    ``handoff``: the run goes on with its agent."""

    turn: int
    call: ToolCall
    handoff: HandoffDef


Step: TypeAlias = CallModel | RunTools | Finish | OutOfTurns | HandOff


def next_turn(turns_done: int, max_turns: int) -> CallModel | OutOfTurns:
    """The next model call, if the turn cap allows one."""
    return CallModel(turns_done + 1) if turns_done < max_turns else OutOfTurns(turns_done)


def after_model(turn: int, response: LlmResponse) -> RunTools | Finish:
    """A model answer with tool calls runs them; one without ends the loop with ``stop``."""
    return RunTools(turn, response) if response.tool_calls else Finish(STOP, response)


def after_tools(
    turn: int, max_turns: int, response: LlmResponse, *, exit_condition_met: bool
) -> Finish | CallModel | OutOfTurns:
    """After a tool round: exit when the exit condition holds, else go round again."""
    if exit_condition_met:
        return Finish(EXIT_CONDITION, response)
    return next_turn(turn, max_turns)


def handoff_of(calls: Sequence[ToolCall],
               handoffs: dict[str, HandoffDef]) -> tuple[ToolCall, HandoffDef] | None:
    """The handoff a round's ``calls`` take: the first call of a handoff's tool, if any."""
    if handoffs:
        for call in calls:
            handoff = handoffs.get(call.name)
            if handoff is not None:
                return call, handoff
    return None
