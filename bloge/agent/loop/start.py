"""``RunStart``: where a run of the engine starts, and what the run opens with.

A run starts new, from its ``input`` after earlier messages (a thread's ``history``), or
resumes a ``checkpoint``, with optional new ``input`` and, when it stopped in the middle of a
tool round, that ``pending`` round. :func:`opening` turns a start into the messages, turn
count, usage and tool results the run opens with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from itertools import islice
from typing import Any

from bloge.agent.definition import AgentDef
from bloge.agent.loop.checkpoint import AgentCheckpoint
from bloge.agent.loop.observer import PendingRound
from bloge.agent.loop.records import AgentInput, AgentUsage
from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage
from bloge.llm.types import ToolDefinition

_NO_USAGE = AgentUsage()


@dataclass(frozen=True, slots=True)
class RunStart:
    """Where a run starts: new, from ``input`` after ``history`` (earlier messages, e.g. a
    thread's); or from ``checkpoint``, with optional new ``input`` appended, continuing the
    tool round ``pending`` when the run stopped in one.

    >>> RunStart(AgentInput.of("Hello"), history=earlier)
    >>> RunStart(checkpoint=error.checkpoint)

    A checkpoint carries its conversation, so it takes no ``history``; a ``pending`` round
    belongs to a checkpoint. Either mistake raises :class:`~bloge.core.errors.BlogeUsageError`.

    ``tools`` are external tools of this run only (a client's own, say): the model sees them
    beside the agent's, and a call of one pauses the run until its result is posted (see
    :class:`~bloge.agent.loop.approval.RunPaused`). A name the agent's tools have already
    raises.
    """

    input: AgentInput | None = None
    _: KW_ONLY
    history: Sequence[LlmMessage] = ()
    checkpoint: AgentCheckpoint | None = None
    pending: PendingRound | None = None
    tools: Sequence[ToolDefinition] = ()

    def __post_init__(self) -> None:
        for tool in self.tools:
            if not isinstance(tool, ToolDefinition):
                raise BlogeUsageError(f"RunStart(tools=…) takes ToolDefinition values, got "
                                      f"{type(tool).__name__}")
        if self.checkpoint is None:
            if self.pending is not None:
                raise BlogeUsageError("a pending tool round continues a checkpoint: give "
                                      "RunStart(pending=…) the checkpoint= it belongs to")
        elif self.history:
            raise BlogeUsageError("a checkpoint carries its conversation: "
                                  "RunStart(checkpoint=…) takes no history=")


class Opening:
    """What a run opens with: its first messages (the memory's and the transcript's start),
    the last of which are its new ``input`` (the messages it was given, which its input
    guards check), the turns already done, the usage so far and the last tool results."""

    __slots__ = ("base_usage", "input", "messages", "tool_results", "turns_done")

    def __init__(self, messages: tuple[LlmMessage, ...], turns_done: int,
                 base_usage: AgentUsage, tool_results: dict[str, Any], *,
                 input: tuple[LlmMessage, ...] = ()) -> None:
        self.messages = messages
        self.turns_done = turns_done
        self.base_usage = base_usage
        self.tool_results = tool_results
        self.input = input


def opening(start: RunStart, definition: AgentDef) -> Opening:
    """What a run of ``definition`` from ``start`` opens with; a checkpoint of another agent
    raises :class:`~bloge.core.errors.BlogeUsageError`."""
    # Each list of messages is copied once here: a long history costs a copy, no more.
    new = start.input.messages if start.input is not None else ()
    checkpoint = start.checkpoint
    if checkpoint is None:
        earlier = start.history
        prompt = definition.system_prompt
        if not prompt or not earlier or earlier[0].role != "system":
            system = (LlmMessage.system(prompt),) if prompt else ()
            return Opening((*system, *earlier, *new), 0, _NO_USAGE, {}, input=new)
        return Opening((*_led_by(prompt, earlier), *new), 0, _NO_USAGE, {}, input=new)
    if checkpoint.agent_id not in (None, definition.id):
        raise BlogeUsageError(f"checkpoint of agent {checkpoint.agent_id!r} cannot resume "
                              f"agent {definition.id!r}")
    if new and checkpoint.conversation and checkpoint.conversation[-1].tool_calls:
        raise BlogeUsageError("the checkpoint stops in a tool round whose calls wait (a paused "
                              "run's): resume it without input; new input follows its answer")
    return Opening((*checkpoint.conversation, *new), checkpoint.turn_count, checkpoint.usage,
                   dict(checkpoint.tool_results), input=new)


def handed_over(view: Sequence[LlmMessage], handing: AgentDef, definition: AgentDef,
                turns_done: int, usage: AgentUsage, tool_results: dict[str, Any]) -> Opening:
    """What the run opens with for ``definition`` when agent ``handing`` hands it over, with
    that agent's memory ``view``: the view led by this agent's prompt instead of the other's
    (a summary the memory wrote stays), the turns, usage and tool results so far."""
    skip = int(bool(view) and view[0].role == "system"
               and view[0].content == handing.system_prompt)
    prompt = definition.system_prompt
    system = (LlmMessage.system(prompt),) if prompt else ()
    return Opening((*system, *islice(view, skip, None)), turns_done, usage, tool_results)


def _led_by(prompt: str, history: Sequence[LlmMessage]) -> Sequence[LlmMessage]:
    """``history`` of a thread led by ``prompt`` alone: the system messages it starts with
    are the prompts of the agents that ran on the thread so far (another agent's, when the
    thread changes hands), not this agent's instructions. The history's own message is kept
    when it is this prompt, so that the thread's log does not store it again."""
    leading = 1
    while leading < len(history) and history[leading].role == "system":
        leading += 1
    if leading == 1 and history[0].content == prompt:
        return history  # the usual case: this agent ran on the thread before
    ours = next((message for message in history[:leading] if message.content == prompt),
                None)
    return (ours or LlmMessage.system(prompt), *islice(history, leading, None))
