"""Tool dispatch: one turn's tool calls, run concurrently under the agent's cap.

Every mistake a model can make — an unknown tool, arguments that are not JSON, missing or
ill-typed arguments — and every operator failure or timeout becomes a tool message stating
the problem, so the model can correct itself; nothing here raises for them. Cancellation
propagates: a cancelled run cancels its running tools.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bloge.agent.definition import AgentToolRef
from bloge.agent.listeners import (
    AgentCallbackContext,
    ListenerChain,
    ToolCompletedPayload,
    ToolDispatchedPayload,
)
from bloge.agent.loop.arguments import ArgumentsError, check_arguments, parse_arguments
from bloge.agent.loop.chunks import AgentStreamChunk, ToolEnd, ToolStart
from bloge.agent.loop.pause import ChildWait, SubAgentPaused
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import ExpressionError, OperatorInputError
from bloge.core.operator import operator_metadata
from bloge.core.registry import OperatorRegistry
from bloge.core.tracecontext import enter_tool_call
from bloge.llm.messages import LlmMessage, ToolCall

if TYPE_CHECKING:
    from bloge.agent.loop.observer import RecordedResult, RunObserver

#: How much of a tool's output, in characters, a ``ToolCompletedPayload`` summary keeps.
SUMMARY_LENGTH = 200
#: ``await sink(chunk)``: receives a run's stream chunks as they happen.
ChunkSink = Callable[[AgentStreamChunk], Awaitable[None]]


class DescendantCalls:
    """The tool calls a run's sub-agents (and theirs, all the way down) have made, against
    the lowest ceiling a sub-agent tool on the way set (``None``: no ceiling yet)."""

    __slots__ = ("ceiling", "made")

    def __init__(self) -> None:
        self.ceiling: int | None = None
        self.made = 0

    def lower(self, ceiling: int | None) -> None:
        """Keep ``ceiling`` when it is below the one kept."""
        if ceiling is not None and (self.ceiling is None or ceiling < self.ceiling):
            self.ceiling = ceiling

    def take(self) -> bool:
        """Count one more call; ``False`` (not counted) once the ceiling is reached."""
        if self.ceiling is not None and self.made >= self.ceiling:
            return False
        self.made += 1
        return True


@dataclass(frozen=True, slots=True)
class ToolCallScope:
    """The tool call an operator runs in: its id, where the run's chunks go (``None``: the
    run does not stream), the calls of the run tree's sub-agents, and ``conversation``: what
    the run's model saw when it made the call (its memory's view, ending with the message
    that asks for the call), read when a sub-agent starts from it (``None``: not known, the
    round is run away from the run's messages)."""

    call_id: str
    tool_name: str
    sink: ChunkSink | None
    descendants: DescendantCalls
    conversation: Callable[[], Sequence[LlmMessage]] | None = None


#: The tool call being run in this task: what a sub-agent started by it reads.
TOOL_CALL: ContextVar[ToolCallScope | None] = ContextVar("bloge_tool_call", default=None)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call came to. ``content`` is the tool message the model receives.
    ``waits_on``: the call has not come to anything yet — the sub-agent run it started
    paused (see :mod:`bloge.agent.loop.pause`), and the run pauses after the round."""

    call: ToolCall
    success: bool
    content: str
    result: Any = None
    arguments: Any = None
    latency_ms: float = 0.0
    waits_on: ChildWait | None = None


class ToolScope(Mapping[str, Any]):
    """What an ``input { … }`` binding can read: ``tool_args``, ``ctx``, then ctx's values."""

    __slots__ = ("_args", "_ctx")

    def __init__(self, args: Mapping[str, Any], ctx: OperatorContext) -> None:
        self._args = args
        self._ctx = ctx

    def __getitem__(self, key: str) -> Any:
        if key == "tool_args":
            return self._args
        if key == "ctx":
            return self._ctx
        return self._ctx[key]

    def get(self, key: str, default: Any = None) -> Any:
        if key == "tool_args":
            return self._args
        if key == "ctx":
            return self._ctx
        return self._ctx.get(key, default)

    def __iter__(self) -> Iterator[str]:
        yield "tool_args"
        yield "ctx"
        yield from self._ctx

    def __len__(self) -> int:
        return 2 + len(self._ctx)


class ToolDispatcher:
    """Runs tool calls for one agent run; built once per run."""

    __slots__ = ("_cap", "_codec", "_context", "_conversation", "_ctx", "_descendants",
                 "_listeners", "_nested", "_observer", "_registry", "_running", "_sink",
                 "_timeout", "_tools")

    def __init__(
        self,
        tools: Sequence[AgentToolRef],
        registry: OperatorRegistry,
        *,
        ctx: OperatorContext,
        codec: JsonCodec,
        listeners: ListenerChain,
        context: AgentCallbackContext,
        max_concurrency: int | None,
        default_timeout: float | None,
        sink: ChunkSink | None = None,
        observer: RunObserver | None = None,
        conversation: Callable[[], Sequence[LlmMessage]] | None = None,
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._conversation = conversation
        self._registry = registry
        self._ctx = ctx
        self._codec = codec
        self._listeners = listeners
        self._context = context
        self._cap = max_concurrency
        self._timeout = default_timeout
        self._sink = sink
        self._observer = observer
        self._running = 0
        caller = TOOL_CALL.get()  # set when this run is a sub-agent's, run by a tool call
        self._nested = caller is not None
        self._descendants = caller.descendants if caller is not None else DescendantCalls()

    async def run(self, turn: int, calls: Sequence[ToolCall], *,
                  recorded: Mapping[str, RecordedResult] | None = None) -> list[ToolOutcome]:
        """Run ``calls`` and return their outcomes in the model's order.

        ``recorded`` continues a round a recorded run stopped in: those calls' results are
        used as they are, and a call without one runs again only if its operator is
        idempotent (see :class:`~bloge.agent.loop.observer.PendingRound`).
        """
        self._running = len(calls)
        dispatched = "on_agent_tool_dispatched" in self._listeners.wanted
        for call in calls:
            if dispatched:
                self._listeners.notify("on_agent_tool_dispatched", self._context,
                                       ToolDispatchedPayload(turn, call.id, call.name,
                                                             call.arguments,
                                                             _replayed(call, recorded)))
            if self._sink is not None:
                await self._sink(ToolStart(call.name, call.id, turn))
        if len(calls) == 1:
            return [await self._run_one(turn, calls[0], recorded)]
        outcomes: list[ToolOutcome | None] = [None] * len(calls)
        limit = asyncio.Semaphore(self._cap) if self._cap and self._cap < len(calls) else None

        async def run_slot(index: int, call: ToolCall) -> None:
            if limit is None:
                outcomes[index] = await self._run_one(turn, call, recorded)
                return
            async with limit:
                outcomes[index] = await self._run_one(turn, call, recorded)

        async with asyncio.TaskGroup() as group:
            for index, call in enumerate(calls):
                group.create_task(run_slot(index, call))
        return [outcome for outcome in outcomes if outcome is not None]

    async def _run_one(self, turn: int, call: ToolCall,
                       recorded: Mapping[str, RecordedResult] | None = None) -> ToolOutcome:
        enter_tool_call(call.id)  # what the tool calls carries its span, when traced
        started = time.perf_counter()
        scope = TOOL_CALL.set(ToolCallScope(call.id, call.name, self._sink, self._descendants,
                                           self._conversation))
        try:
            if recorded is None:
                success, content, result, arguments = await self._attempt(call, turn)
            else:
                success, content, result, arguments = await self._continue(call, turn,
                                                                           recorded)
        except SubAgentPaused as paused:
            # Not completed: no listener, stream or ledger hears of an end.
            self._running -= 1
            return ToolOutcome(call, success=False, content=str(paused), waits_on=paused.wait)
        finally:
            TOOL_CALL.reset(scope)
        latency = (time.perf_counter() - started) * 1000.0
        if "on_agent_tool_completed" in self._listeners.wanted:
            self._listeners.notify("on_agent_tool_completed", self._context, ToolCompletedPayload(
                turn, call.id, call.name, success, latency, content[:SUMMARY_LENGTH],
                _replayed(call, recorded),
            ))
        if self._sink is not None:
            await self._sink(ToolEnd(call.name, call.id, success, turn))
        outcome = ToolOutcome(call, success, content, result, arguments, latency)
        self._running -= 1
        if self._observer is not None:
            await self._observer.tool_completed(turn, outcome, running=self._running)
        return outcome

    async def _continue(self, call: ToolCall, turn: int,
                        recorded: Mapping[str, RecordedResult]) -> tuple[bool, str, Any, Any]:
        """A call of a round resumed after its run stopped: its recorded result, a new attempt
        when its operator is idempotent, or else a failure saying its outcome is unknown."""
        found = recorded.get(call.id)
        if found is not None:
            result = None  # a failed call's content is its error's text
            if found.success:
                result = found.content if found.text_result else self._codec.decode(found.content)
            return found.success, found.content, result, \
                _arguments_or_none(call.arguments, self._codec)
        tool = self._tools.get(call.name)
        if tool is not None and operator_metadata(self._registry.get(tool.operator_ref)).idempotent:
            return await self._attempt(call, turn)
        return _failure(f"the outcome of tool {call.name!r} is unknown: the run stopped while it "
                        "ran, and it was not run again because its operator is not idempotent; "
                        "check whether it took effect before calling it again",
                        _arguments_or_none(call.arguments, self._codec))

    async def _attempt(self, call: ToolCall, turn: int) -> tuple[bool, str, Any, Any]:
        """(success, tool message content, operator result, parsed arguments)."""
        tool = self._tools.get(call.name)
        if tool is None:
            available = ", ".join(self._tools) or "none"
            return _failure(f"unknown tool {call.name!r}; available tools: {available}")
        try:
            arguments = parse_arguments(call.arguments, self._codec)
            check_arguments(tool.tool_definition.parameters, arguments)
        except ArgumentsError as exc:
            return _failure(f"invalid arguments for tool {call.name!r}: {exc}")
        if self._nested and not self._descendants.take():
            return _failure(f"tool {call.name!r} was not run: the sub-agents of this run made "
                            f"{self._descendants.made} tool calls, their ceiling "
                            "(max_descendant_tool_calls); answer with what you have", arguments)
        timeout = tool.timeout if tool.timeout is not None else self._timeout
        ctx = self._ctx
        if self._observer is not None:
            ctx = ctx.child(idempotency_key=f"{self._observer.run_id}:{turn}:{call.id}",
                            run_id=self._observer.run_id)
        scope = ToolScope(arguments, ctx)
        try:
            if timeout is None:
                outputs = await tool.graph.run(self._registry, arguments, ctx, scope=scope)
            else:
                async with asyncio.timeout(timeout):
                    outputs = await tool.graph.run(self._registry, arguments, ctx, scope=scope)
        except TimeoutError:
            return _failure(f"tool {call.name!r} timed out after {timeout:g} s", arguments)
        except (ExpressionError, OperatorInputError) as exc:
            return _failure(f"invalid arguments for tool {call.name!r}: {exc}", arguments)
        except SubAgentPaused:
            raise
        except Exception as exc:  # noqa: BLE001 -- an operator's failure is fed back to the model
            return _failure(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}", arguments)
        result = outputs[tool.result_node_id]
        content = result if isinstance(result, str) else self._codec.encode_lenient(result)
        return True, content, result, arguments


def _replayed(call: ToolCall, recorded: Mapping[str, RecordedResult] | None) -> bool:
    """Whether the call's result comes from the ledger of a resumed run."""
    return recorded is not None and call.id in recorded


def _arguments_or_none(text: str, codec: JsonCodec) -> Any:
    try:
        return parse_arguments(text, codec)
    except ArgumentsError:
        return None


def _failure(problem: str, arguments: Any = None) -> tuple[bool, str, Any, Any]:
    return False, f"Error: {problem}", None, arguments
