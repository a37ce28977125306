"""Agents as tools: a tool call that runs another agent, as a child run of the caller's.

:class:`SubAgentTool` is the operator of such a tool (``Agent.as_tool()``, the DSL's ``tool
research : agent researcher { … }``). Each call runs the agent on the call's input (the one
string argument, else the arguments as JSON) with its own turn cap and budget, and its answer
is the call's result — its typed output's JSON data when it has an output type. A failure
(a provider's, a budget's, the turn cap) is the call's error, which the caller's model sees.
A child that pauses — a call of its own waits for approval or for a posted result — pauses
its caller too (:class:`~bloge.agent.loop.pause.SubAgentPaused`): the caller's record lists
the child's waiting calls, a decision given on either run decides them, and the caller
resumed takes the child up, whose answer is then the call's result.

Recorded — the sub-agent's operator has a store and the caller's run is recorded — the child is
a run of its own whose ``parent_run_id`` is the caller's, and whose id derives from the call's
(run, turn, call id). A caller resumed after a crash therefore takes its children up where
they are: a finished child's recorded answer is the result (it does not run again), a child
that stopped is continued from its last step, one that never started starts. A caller that
streams sees its children's chunks as they happen, each a
:class:`~bloge.agent.loop.chunks.SubAgentChunk` under the call that runs it.

The calls a run's sub-agents make (their tools', their own sub-agents', all the way down)
count against one ceiling per run tree, ``max_descendant_tool_calls``: past it, a child's
tool call is answered with an error instead of running, so that one question cannot fan out
into hundreds of calls. Several sub-agent calls in one round run concurrently, under the
caller's ``max_tool_concurrency``, as any tool calls do.

A child starts from the call's question alone (``context="fresh"``, the default), or from
its caller's conversation so far, then the question (``context="parent"``, see
:mod:`bloge.agent.caller_context`). A child taken up again has its messages already: it is
not given the caller's again. Its run is recorded on a thread of its own (``thread="fresh"``,
the default) or on its caller's, the caller's memory left as it is either way
(``thread="parent"``, see :mod:`bloge.agent.caller_thread`).

A durable runner that runs children itself (Temporal, as child workflows) sets
:data:`CHILDREN_ELSEWHERE` while it runs a sub-agent tool's call: the call then stops where its
question is known, raising :class:`ChildRunRequested` with it and the tool's context, and the
runner starts the child's run — from the caller's conversation as its model saw it, for a
``"parent"`` context (:func:`~bloge.agent.caller_context.opening_of`), on the caller's
thread for a ``"parent"`` thread — and makes its answer the call's result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bloge.agent.agent_calls import QUESTION_PARAMETERS
from bloge.agent.caller_context import SubAgentContext, opening_of, sub_agent_context
from bloge.agent.caller_thread import SubAgentThread, sub_agent_thread
from bloge.agent.loop.chunks import AgentStreamChunk, Done, SubAgentChunk
from bloge.agent.loop.pause import ChildWait, RunPaused, SubAgentPaused
from bloge.agent.loop.records import AgentInput
from bloge.agent.loop.tools import TOOL_CALL, ChunkSink, ToolCallScope
from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeError, BlogeUsageError
from bloge.core.operator import OperatorMetadata

if TYPE_CHECKING:
    from bloge.agent.loop.base import AgentOperatorBase

#: The ceiling on the tool calls of a run's sub-agents, all the way down, unless a sub-agent
#: tool (or ``bloge.agents.max-descendant-tool-calls``) sets another.
DEFAULT_MAX_DESCENDANT_TOOL_CALLS = 200

#: Set (``True``) by a durable runner that runs a sub-agent tool's child run itself: the call
#: raises :class:`ChildRunRequested` instead of running it.
CHILDREN_ELSEWHERE: ContextVar[bool] = ContextVar("bloge_children_elsewhere", default=False)


class ChildRunRequested(BaseException):
    """A sub-agent call's child run, to be run by the durable runner that set
    :data:`CHILDREN_ELSEWHERE`: ``agent_id`` asked ``question``; ``max_descendant_tool_calls``
    is the tool's ceiling on the run tree's sub-agents' tool calls; ``context`` where the
    child starts (``"parent"``: from the caller's conversation, which the runner knows, see
    :mod:`bloge.agent.caller_context`); ``thread`` which thread it is recorded on
    (``"parent"``: its caller's, see :mod:`bloge.agent.caller_thread`). A ``BaseException``,
    so that the tool round does not take it for the tool's failure."""

    def __init__(self, agent_id: str, question: str, *,
                 max_descendant_tool_calls: int | None = None,
                 context: SubAgentContext = "fresh",
                 thread: SubAgentThread = "fresh") -> None:
        super().__init__(f"sub-agent {agent_id!r} is to be run by the runner")
        self.agent_id = agent_id
        self.question = question
        self.max_descendant_tool_calls = max_descendant_tool_calls
        self.context = context
        self.thread = thread


class SubAgentError(BlogeError):
    """A sub-agent's run did not answer: the caller's model sees this as the call's error.
    ``run_id`` names the child's recorded run (``None`` when it is not recorded)."""

    def __init__(self, message: str, *, agent_id: str, run_id: str | None) -> None:
        super().__init__(message)
        self.agent_id = agent_id
        self.run_id = run_id


class SubAgentTool:
    """The operator of a tool that asks ``agent`` (an agent operator): see the module docs.

    ``max_descendant_tool_calls`` lowers the run tree's ceiling on its sub-agents' tool calls
    (the lowest ceiling on the way down holds); ``context`` is what a call's run starts
    from, ``thread`` which thread it is recorded on. Its calls are idempotent: a call run again
    after its caller's crash takes up the same child run instead of starting another.
    """

    __slots__ = ("agent", "context", "max_descendant_tool_calls", "metadata", "thread")
    idempotent = True

    def __init__(self, agent: AgentOperatorBase, *, description: str = "",
                 max_descendant_tool_calls: int | None = DEFAULT_MAX_DESCENDANT_TOOL_CALLS,
                 context: SubAgentContext = "fresh",
                 thread: SubAgentThread = "fresh") -> None:
        if max_descendant_tool_calls is not None and max_descendant_tool_calls < 0:
            raise BlogeUsageError(f"sub-agent {agent.agent_def.id!r}: "
                                  "max_descendant_tool_calls must be 0 or more, got "
                                  f"{max_descendant_tool_calls}")
        self.agent = agent
        self.context = sub_agent_context(context, where=f"sub-agent {agent.agent_def.id!r}")
        self.thread = sub_agent_thread(thread, where=f"sub-agent {agent.agent_def.id!r}")
        self.max_descendant_tool_calls = max_descendant_tool_calls
        self.metadata = OperatorMetadata(
            prompt_hint=description or f"Ask agent {agent.agent_def.id!r}",
            idempotent=True, input_schema=QUESTION_PARAMETERS)

    def __repr__(self) -> str:
        return (f"SubAgentTool({self.agent.agent_def.id!r}, context={self.context!r}, "
                f"thread={self.thread!r})")

    async def execute(self, input: Any, ctx: OperatorContext) -> Any:
        agent_id = self.agent.agent_def.id
        scope = TOOL_CALL.get()
        if scope is not None:
            scope.descendants.lower(self.max_descendant_tool_calls)
        if CHILDREN_ELSEWHERE.get():
            raise ChildRunRequested(agent_id, question_of(input),
                                    max_descendant_tool_calls=self.max_descendant_tool_calls,
                                    context=self.context, thread=self.thread)
        run_id = child_run_id(ctx.idempotency_key)
        sink = None if scope is None or scope.sink is None else _relay(scope, run_id)
        opening = self._opening(scope, question_of(input))
        try:
            output = await self.agent.arun_child(opening, ctx, run_id=run_id, sink=sink,
                                                 on_caller_thread=self.thread == "parent")
        except RunPaused as paused:
            if paused.run_id is None or run_id is None or scope is None:
                raise SubAgentError(f"sub-agent {agent_id!r} did not answer: {paused}; a "
                                    "sub-agent's call can wait only when both runs are "
                                    "recorded (give both agents a store)",
                                    agent_id=agent_id, run_id=paused.run_id) from paused
            raise SubAgentPaused(_waiting(scope, paused)) from None
        except BlogeError as error:
            where = f" (run {run_id})" if run_id is not None and self.agent.store else ""
            raise SubAgentError(f"sub-agent {agent_id!r}{where} failed: {error}",
                                agent_id=agent_id, run_id=run_id) from error
        return output.output_data if output.output_data is not None else output.content

    def _opening(self, scope: ToolCallScope | None, question: str) -> str | AgentInput:
        """What the child's run starts from: the question, or (``context = "parent"``) the
        caller's conversation, then the question (see :mod:`bloge.agent.caller_context`).
        A resumed child has its own messages already: :meth:`arun_child` takes it up."""
        if self.context == "fresh":
            return question
        if scope is None or scope.conversation is None:
            raise SubAgentError(
                f"sub-agent {self.agent.agent_def.id!r} starts from its caller's conversation "
                '(context = "parent"), which this call cannot see: it runs outside the '
                "caller's tool round; use the fresh context there",
                agent_id=self.agent.agent_def.id, run_id=None)
        return AgentInput(opening_of(scope.conversation(), question))


def _waiting(scope: ToolCallScope, paused: RunPaused) -> ChildWait:
    """What the call of ``scope`` waits on: the child's paused run, and the calls it (and
    the runs it started) waits on, each naming its run."""
    assert paused.run_id is not None
    pending = tuple(call if call.run_id else replace(call, run_id=paused.run_id)
                    for call in paused.pending)
    return ChildWait(scope.call_id, scope.tool_name, paused.run_id, paused.status, pending)


def child_run_id(idempotency_key: str | None) -> str | None:
    """The id of the run a recorded caller's tool call starts (``None`` for an unrecorded
    caller): the same for every attempt of that call, so that a resumed caller finds it."""
    if idempotency_key is None:
        return None
    return hashlib.sha256(f"subagent:{idempotency_key}".encode()).hexdigest()[:32]


def question_of(input: Any) -> str:
    """What a call asks: its text, its one string argument, else its arguments as JSON."""
    if isinstance(input, str):
        return input
    if isinstance(input, Mapping) and len(input) == 1:
        (value,) = input.values()
        if isinstance(value, str):
            return value
    return DEFAULT_CODEC.encode_lenient(input)


def _relay(scope: ToolCallScope, run_id: str | None) -> ChunkSink:
    """Where a child's chunks go: to its caller's stream, under the call that runs it."""
    assert scope.sink is not None
    parent = scope.sink

    async def relay(chunk: AgentStreamChunk) -> None:
        if not isinstance(chunk, Done):  # the call's own ToolEnd says it ended
            await parent(SubAgentChunk(scope.tool_name, scope.call_id, run_id, chunk))

    return relay
