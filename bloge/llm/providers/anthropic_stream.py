"""Assembling a streamed Messages answer: event payloads in, neutral chunks out.

The stream is ``message_start``, then per content block ``content_block_start``,
``content_block_delta`` (``text_delta`` or ``input_json_delta``) and ``content_block_stop``,
then ``message_delta`` (stop reason, output tokens) and ``message_stop``; ``ping`` may come at
any time and ``error`` ends it. Unknown events and deltas (thinking, citations) are skipped,
as the API's versioning policy asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge.llm.messages import ToolCall
from bloge.llm.providers.anthropic import (
    cache_from_wire,
    finish_reason_of,
    tool_call_of,
    usage_from_wire,
)
from bloge.llm.providers.server_errors import message_of
from bloge.llm.providers.wire import ServerStreamError, payload
from bloge.llm.types import LlmChunk

#: Error types of an ``error`` event after which the same request may later succeed.
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


class _PartialToolUse:
    """A ``tool_use`` block whose ``input_json_delta`` fragments are still arriving."""

    __slots__ = ("arguments", "block")

    def __init__(self, block: Mapping[str, Any]) -> None:
        self.block = block
        self.arguments: list[str] = []

    def complete(self) -> ToolCall:
        # An empty first fragment is normal; a tool without parameters sends only that.
        return tool_call_of(self.block, "".join(self.arguments))


class AnthropicStreamAssembler:
    """Feed it each event's JSON payload; it returns the chunks to yield.

    Text chunks come out as they arrive, a tool call as soon as its block stops, and
    :meth:`finish` returns the final ``done`` chunk (with any tool call whose block never
    stopped before it).
    """

    __slots__ = ("_cache", "_calls", "_completion", "_model", "_open", "_prompt", "_served",
                 "_stop_reason", "_stopped")

    def __init__(self, *, model: str = "") -> None:
        self._model = model
        self._served: str | None = None
        self._cache = (0, 0)
        self._open: dict[Any, _PartialToolUse] = {}
        self._calls = 0
        self._stop_reason: str | None = None
        self._stopped = False
        self._prompt: int | None = None
        self._completion: int | None = None

    @property
    def stopped(self) -> bool:
        """Whether ``message_stop`` arrived."""
        return self._stopped

    @property
    def finished(self) -> bool:
        """Whether the answer is complete: stopped, or at least told why it ended."""
        return self._stopped or self._stop_reason is not None

    def feed_data(self, data: str) -> list[LlmChunk]:
        """The chunks one event's data completes."""
        return self.feed(payload(data))

    def feed(self, event: Mapping[str, Any]) -> list[LlmChunk]:
        """The chunks one event completes; :class:`ServerStreamError` for an ``error`` event."""
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event.get("index"), event.get("delta") or {})
        if kind == "content_block_start":
            return self._start(event.get("index"), event.get("content_block") or {})
        if kind == "content_block_stop":
            call = self._open.pop(event.get("index"), None)
            return [] if call is None else [self._tool_chunk(call)]
        if kind == "message_start":
            message = event.get("message") or {}
            self._usage(message.get("usage"))
            named = message.get("model")
            if isinstance(named, str) and named:
                self._served = named
                self._model = self._model or named
        elif kind == "message_delta":
            self._stop_reason = (event.get("delta") or {}).get("stop_reason") or self._stop_reason
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            error = event.get("error") or {}
            raise ServerStreamError(
                message_of(event) or "the server reported an error",
                retryable=error.get("type") in RETRYABLE_ERRORS,
            )
        return []

    def finish(self) -> list[LlmChunk]:
        """Tool calls still open, then the ``done`` chunk with finish reason and usage."""
        chunks = [self._tool_chunk(call) for call in self._open.values()]
        self._open.clear()
        chunks.append(
            LlmChunk(
                done=True,
                finish_reason=finish_reason_of(self._stop_reason, has_tool_calls=self._calls > 0),
                prompt_tokens=self._prompt,
                completion_tokens=self._completion,
                model=self._model,
                cache_read_tokens=self._cache[0],
                cache_write_tokens=self._cache[1],
                served_model=self._served,
            )
        )
        return chunks

    def _delta(self, index: Any, delta: Mapping[str, Any]) -> list[LlmChunk]:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            return [LlmChunk(text)] if text else []
        if kind == "input_json_delta":
            call = self._open.get(index)
            fragment = delta.get("partial_json")
            if call is not None and fragment:
                call.arguments.append(fragment)
        return []

    def _start(self, index: Any, block: Mapping[str, Any]) -> list[LlmChunk]:
        kind = block.get("type")
        if kind == "tool_use":
            self._open[index] = _PartialToolUse(block)
        elif kind == "text" and block.get("text"):
            return [LlmChunk(block["text"])]
        return []

    def _tool_chunk(self, call: _PartialToolUse) -> LlmChunk:
        self._calls += 1
        return LlmChunk(tool_call=call.complete())

    def _usage(self, usage: Any) -> None:
        # message_delta's usage is cumulative; it repeats the cache counts or leaves them out.
        if isinstance(usage, Mapping) and ("cache_read_input_tokens" in usage
                                           or "cache_creation_input_tokens" in usage):
            self._cache = cache_from_wire(usage)
        prompt, completion = usage_from_wire(usage)
        if prompt is not None:
            self._prompt = prompt
        if completion is not None:
            self._completion = completion
