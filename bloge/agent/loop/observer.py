"""``RunObserver``: where persistence plugs into the loop, and ``RunStore``, what records an
agent operator's runs (:func:`run_store_of` its ``store=``).

The loop knows nothing of databases (``bloge.agent`` never imports ``bloge.store``): a store
drives the engine and hands it an observer whose hooks the loop awaits at the points where a
run's state must be durable before it goes on — before each model call, after a model answer
that asks for tools, after each tool call, at the end. What a hook raises fails the run.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bloge.agent.listeners import AgentExecutionListener, HandoffPayload
from bloge.agent.loop.chunks import AgentStreamChunk
from bloge.agent.loop.records import AgentUsage
from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage
from bloge.llm.types import LlmResponse, ToolDefinition

if TYPE_CHECKING:
    from bloge.agent.loop.approval import Decision, PendingCall
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
    declares itself idempotent; otherwise the model is told its outcome is unknown (a call
    approved earlier included: an approval is never a licence to send a call twice)."""

    turn: int
    response: LlmResponse
    results: Mapping[str, RecordedResult]
    decisions: Mapping[str, Decision] = field(default_factory=dict)
    """Decisions on calls that waited for approval and have not run: an approved call runs
    now, a denied one tells the model it was denied and why."""
    waiting: frozenset[str] = frozenset()
    """Calls that still wait (for a decision, or for an external result): the run pauses
    again after running the others."""

    @property
    def plain(self) -> bool:
        """A round with no decisions and no waiting calls (one a crash stopped)."""
        return not self.decisions and not self.waiting


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

    def calls_waiting(self, turn: int, calls: Sequence[PendingCall]) -> None:
        """``calls`` of the round the model asks for in ``turn`` wait (for approval, or for
        an external result): called just before :meth:`model_answered`, to be written with
        it, so that no call that waits is ever taken for one that may have run."""

    async def tool_completed(self, turn: int, outcome: ToolOutcome, *, running: int) -> None:
        """One tool call of ``turn`` completed; ``running`` calls of the round still run."""

    async def handed_off(self, handoff: HandoffPayload) -> None:
        """The run goes on with agent ``handoff.to_agent`` from the next turn on (its tool
        round is complete): a resume continues with that agent."""

    async def finished(self, exit_reason: str, *, transcript: Sequence[LlmMessage],
                       view: Sequence[LlmMessage], usage: AgentUsage, turns: int,
                       output: AgentOutput | None, error: BaseException | None) -> None:
        """The loop ended, with ``output`` or with ``error`` (a
        :class:`~bloge.agent.loop.approval.RunPaused` when the run paused: exit reason
        ``"paused"``)."""


@runtime_checkable
class RunStore(Protocol):
    """What records an agent operator's runs: runs the engine as a recorded run
    (``bloge.store.RecordedRuns`` on a store, ``bloge.temporal.TemporalRunStore`` on
    Temporal)."""

    async def record_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, thread_id: str | None, sink: ChunkSink | None,
                         metadata: Mapping[str, Any] | None,
                         run_id: str | None = None,
                         tools: Sequence[ToolDefinition] = ()) -> AgentOutput:
        """Run ``input`` as run ``run_id`` (a new id when ``None``) on thread ``thread_id`` (a
        new thread when ``None``); ``tools``: the run's own external tools, kept with the
        run so that its resume offers them too."""
        ...

    async def resume_recorded_run(self, engine: AgentEngine, run_id: str, ctx: OperatorContext,
                                  *, sink: ChunkSink | None) -> AgentOutput:
        """Continue the stored run ``run_id`` from its last completed step."""
        ...


@runtime_checkable
class RunAttacher(Protocol):
    """A run store that takes up a run by its id however far it got (``bloge.store.RecordedRuns``):
    what a sub-agent's call, run again after its caller's crash, needs."""

    async def attach_run(self, engine: AgentEngine, input: AgentInput, ctx: OperatorContext,
                         *, run_id: str, sink: ChunkSink | None,
                         on_caller_thread: bool = False) -> AgentOutput:
        """Run ``run_id`` to its end: its recorded output when it succeeded, continued from
        its last step when it stopped, started when it never was — on a new thread, or with
        ``on_caller_thread`` on that of ``ctx``'s run, the caller's, when it is one of this
        store's running here (see :mod:`bloge.agent.caller_thread`)."""
        ...


@runtime_checkable
class RunDecider(Protocol):
    """A run store that takes decisions on, and results of, a paused run's calls
    (``bloge.store.RecordedRuns``, ``bloge.temporal.TemporalRunStore``)."""

    async def check_resume(self, engine: AgentEngine, run_id: str,
                           ctx: OperatorContext) -> None:
        """Refuse what ``resume_recorded_run`` would refuse before it takes the run back
        (limits the run cannot keep…): asked before decisions are recorded, so that a
        resume refused so records none."""
        ...

    async def decide_run(self, run_id: str, *, decisions: Mapping[str, Decision],
                         tool_results: Mapping[str, Any], principal: str | None) -> None:
        """Record each decision and result (a conflict raises, naming the call)."""
        ...


@functools.singledispatch
def run_store_of(store: object) -> RunStore:
    """What records the runs of an operator given ``store=store``: ``store`` itself when it
    is a :class:`RunStore`, else what the package of its class registered for it
    (``bloge.store`` registers its ``Store``, whose runs a ``RecordedRuns`` records): the
    loop cannot import the packages above it."""
    if isinstance(store, RunStore):
        return store
    raise BlogeUsageError(f"store={store!r} cannot record runs: give a run store "
                          "(bloge.store.open_store(...)) or a RunStore")
