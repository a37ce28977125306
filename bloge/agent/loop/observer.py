"""``RunObserver``: where persistence plugs into the loop, and ``RunStore``, what an agent
operator's ``store=`` is.

The loop knows nothing of databases (``bloge.agent`` never imports ``bloge.store``): a store
drives the engine and hands it an observer whose hooks the loop awaits at the points where a
run's state must be durable before it goes on — before each model call, after a model answer
that asks for tools, after each tool call, at the end. What a hook raises fails the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.records import AgentUsage
from bloge.llm.messages import LlmMessage
from bloge.llm.types import LlmResponse

if TYPE_CHECKING:
    from bloge.agent.loop.engine import AgentEngine
    from bloge.agent.loop.records import AgentInput, AgentOutput
    from bloge.agent.loop.tools import ChunkSink, ToolOutcome
    from bloge.core.context import OperatorContext


@dataclass(frozen=True, slots=True)
class RecordedResult:
    """A tool call's outcome found in a run's ledger: the tool message ``content``, and
    whether the operator returned text (else ``content`` is its result's JSON)."""

    success: bool
    content: str
    text_result: bool


@dataclass(frozen=True, slots=True)
class PendingRound:
    """A tool round a run was in when it stopped: the model's ``response`` of turn ``turn``
    and the results recorded for some of its calls (by call id). A call without a recorded
    result ran, or may have run, when the run stopped: it runs again only when its operator
    declares itself idempotent; otherwise the model is told its outcome is unknown."""

    turn: int
    response: LlmResponse
    results: Mapping[str, RecordedResult]


class RunObserver(Protocol):
    """The hooks of one recorded run (see the module docs). ``transcript`` is the run's
    whole transcript so far (the same list each time, only ever appended to); ``view`` is
    what the memory shows the model."""

    run_id: str
    thread_id: str

    @property
    def listener(self) -> AgentExecutionListener:
        """Receives the run's listener callbacks, after the agent's own listeners."""
        ...

    def chunk(self, chunk: AgentStreamChunk) -> None:
        """A stream chunk the run emitted (streaming runs only)."""

    async def before_model_call(self, turn: int, view: Sequence[LlmMessage],
                                transcript: Sequence[LlmMessage], usage: AgentUsage) -> None:
        """Turn ``turn`` is about to call the model; turn ``turn - 1`` is complete."""

    async def model_answered(self, turn: int, transcript: Sequence[LlmMessage],
                             response: LlmResponse, usage: AgentUsage) -> None:
        """The model answered in ``turn`` (its message is the transcript's last); ``usage``
        counts this call."""

    async def tool_completed(self, turn: int, outcome: ToolOutcome, *, running: int) -> None:
        """One tool call of ``turn`` completed; ``running`` calls of the round still run."""

    async def finished(self, exit_reason: str, *, transcript: Sequence[LlmMessage],
                       view: Sequence[LlmMessage], usage: AgentUsage, turns: int,
                       output: AgentOutput | None, error: BaseException | None) -> None:
        """The loop ended, with ``output`` or with ``error``."""


class RunStore(Protocol):
    """What an agent operator's ``store=`` does: run the engine as a recorded run
    (:class:`bloge.store.Store` is one)."""

    async def record_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, thread_id: str | None, sink: ChunkSink | None,
                         metadata: Mapping[str, Any] | None,
                         run_id: str | None = None) -> AgentOutput:
        """Run ``input`` as run ``run_id`` (a new id when ``None``) on thread ``thread_id`` (a
        new thread when ``None``)."""
        ...

    async def resume_recorded_run(self, engine: AgentEngine, run_id: str, ctx: OperatorContext,
                                  *, sink: ChunkSink | None) -> AgentOutput:
        """Continue the stored run ``run_id`` from its last completed step."""
        ...
