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
from dataclasses import dataclass
from typing import Any

from bloge.agent.definition import AgentToolRef
from bloge.agent.listeners import (
    AgentCallbackContext,
    ListenerChain,
    ToolCompletedPayload,
    ToolDispatchedPayload,
)
from bloge.agent.loop.arguments import ArgumentsError, check_arguments, parse_arguments
from bloge.agent.loop.chunks import AgentStreamChunk, ToolEnd, ToolStart
from bloge.core.codec import JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import ExpressionError, OperatorInputError
from bloge.core.registry import OperatorRegistry
from bloge.llm.messages import ToolCall

SUMMARY_LENGTH = 200
ChunkSink = Callable[[AgentStreamChunk], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call came to. ``content`` is the tool message the model receives."""

    call: ToolCall
    success: bool
    content: str
    result: Any = None
    arguments: Any = None
    latency_ms: float = 0.0


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

    __slots__ = ("_cap", "_codec", "_context", "_ctx", "_listeners", "_registry", "_sink",
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
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._registry = registry
        self._ctx = ctx
        self._codec = codec
        self._listeners = listeners
        self._context = context
        self._cap = max_concurrency
        self._timeout = default_timeout
        self._sink = sink

    async def run(self, turn: int, calls: Sequence[ToolCall]) -> list[ToolOutcome]:
        """Run ``calls`` and return their outcomes in the model's order."""
        for call in calls:
            if self._listeners:
                self._listeners.notify("on_agent_tool_dispatched", self._context,
                                       ToolDispatchedPayload(turn, call.id, call.name,
                                                             call.arguments))
            if self._sink is not None:
                await self._sink(ToolStart(call.name, call.id, turn))
        if len(calls) == 1:
            return [await self._run_one(turn, calls[0])]
        outcomes: list[ToolOutcome | None] = [None] * len(calls)
        limit = asyncio.Semaphore(self._cap) if self._cap and self._cap < len(calls) else None

        async def run_slot(index: int, call: ToolCall) -> None:
            if limit is None:
                outcomes[index] = await self._run_one(turn, call)
                return
            async with limit:
                outcomes[index] = await self._run_one(turn, call)

        async with asyncio.TaskGroup() as group:
            for index, call in enumerate(calls):
                group.create_task(run_slot(index, call))
        return [outcome for outcome in outcomes if outcome is not None]

    async def _run_one(self, turn: int, call: ToolCall) -> ToolOutcome:
        started = time.perf_counter()
        success, content, result, arguments = await self._attempt(call)
        latency = (time.perf_counter() - started) * 1000.0
        if self._listeners:
            self._listeners.notify("on_agent_tool_completed", self._context, ToolCompletedPayload(
                turn, call.id, call.name, success, latency, content[:SUMMARY_LENGTH],
            ))
        if self._sink is not None:
            await self._sink(ToolEnd(call.name, call.id, success, turn))
        return ToolOutcome(call, success, content, result, arguments, latency)

    async def _attempt(self, call: ToolCall) -> tuple[bool, str, Any, Any]:
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
        timeout = tool.timeout if tool.timeout is not None else self._timeout
        scope = ToolScope(arguments, self._ctx)
        try:
            if timeout is None:
                outputs = await tool.graph.run(self._registry, arguments, self._ctx, scope=scope)
            else:
                async with asyncio.timeout(timeout):
                    outputs = await tool.graph.run(self._registry, arguments, self._ctx,
                                                   scope=scope)
        except TimeoutError:
            return _failure(f"tool {call.name!r} timed out after {timeout:g} s", arguments)
        except (ExpressionError, OperatorInputError) as exc:
            return _failure(f"invalid arguments for tool {call.name!r}: {exc}", arguments)
        except Exception as exc:
            return _failure(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}", arguments)
        result = outputs[tool.result_node_id]
        return True, self._content(result), result, arguments

    def _content(self, result: Any) -> str:
        if isinstance(result, str):
            return result
        return self._codec.encode_lenient(result)


def _failure(problem: str, arguments: Any = None) -> tuple[bool, str, Any, Any]:
    return False, f"Error: {problem}", None, arguments
