"""Assembling a streamed Chat Completions answer: SSE payloads in, neutral chunks out.

Tool-call arguments arrive as fragments that must be joined per call. OpenAI numbers each
fragment with the ``index`` of its call and sends the call's ``id`` on the first one only;
compatible servers are looser (Ollama and vLLM have sent every call at index 0, or left out
``index``). The rules here, in order: a fragment with an ``id`` seen before continues that
call, and an ``id`` not seen before starts a new call whatever its index; a fragment without
an ``id`` continues the call at its ``index`` (the latest call when it has no index), unless it
names a function while that call already holds complete JSON arguments, which means the
server reused the index for the next call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bloge.llm.messages import ToolCall
from bloge.llm.providers.openai import (
    cached_from_wire,
    finish_reason_of,
    named_model,
    new_call_id,
    usage_from_wire,
)
from bloge.llm.providers.server_errors import message_of
from bloge.llm.providers.wire import ServerStreamError, WireFormatError, payload
from bloge.llm.types import LlmChunk

#: The data of the event that ends an OpenAI stream.
DONE = "[DONE]"


class _PartialCall:
    """A tool call whose fragments are still arriving."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self, call_id: str | None) -> None:
        self.id = call_id
        self.name = ""
        self.arguments: list[str] = []

    def complete(self) -> ToolCall:
        if not self.name:
            raise WireFormatError("a streamed tool call never named its function")
        return ToolCall(self.id or new_call_id(), self.name, "".join(self.arguments) or "{}")


class OpenAIStreamAssembler:
    """Feed it each event's JSON payload; it returns the chunks to yield.

    Text chunks come out as they arrive. :meth:`finish` (at ``[DONE]``, or at the end of a
    stream that reported its finish reason) returns one chunk per complete tool call, in the
    order the calls started, then the ``done`` chunk with the finish reason and the usage.
    """

    __slots__ = ("_by_id", "_by_index", "_cached", "_calls", "_completion", "_done",
                 "_finish_reason", "_model", "_prompt", "_served")

    def __init__(self, *, model: str = "") -> None:
        self._model = model
        self._served: str | None = None
        self._cached = 0
        self._done = False
        self._calls: list[_PartialCall] = []
        self._by_index: dict[int, _PartialCall] = {}
        self._by_id: dict[str, _PartialCall] = {}
        self._finish_reason: str | None = None
        self._prompt: int | None = None
        self._completion: int | None = None

    @property
    def stopped(self) -> bool:
        """Whether the ``[DONE]`` sentinel arrived."""
        return self._done

    @property
    def finished(self) -> bool:
        """Whether the answer is complete: ``[DONE]``, or told why it ended."""
        return self._done or self._finish_reason is not None

    def feed_data(self, data: str) -> list[LlmChunk]:
        """The text chunks in one event's data (the ``[DONE]`` sentinel ends the stream)."""
        if data == DONE:
            self._done = True
            return []
        return self.feed(payload(data))

    def feed(self, payload: Mapping[str, Any]) -> list[LlmChunk]:
        """The text chunks in one ``chat.completion.chunk`` payload.

        Raises :class:`ServerStreamError` for an ``{"error": …}`` payload, which some
        compatible servers send in the middle of a stream.
        """
        if payload.get("error"):
            raise ServerStreamError(message_of(payload) or "the server reported an error")
        if self._served is None:
            self._served = named_model(payload)
        usage = payload.get("usage")
        if usage:
            self._prompt, self._completion = usage_from_wire(usage)
            self._cached = cached_from_wire(usage)
        chunks: list[LlmChunk] = []
        for choice in payload.get("choices") or ():
            if choice.get("index", 0):
                continue
            delta = choice.get("delta")
            if delta:
                content = delta.get("content")
                if content:
                    chunks.append(LlmChunk(content))
                for fragment in delta.get("tool_calls") or ():
                    self._fragment(fragment)
            reason = choice.get("finish_reason")
            if reason:
                self._finish_reason = reason
        return chunks

    def finish(self) -> list[LlmChunk]:
        """The tool-call chunks and the final ``done`` chunk."""
        chunks = [LlmChunk(tool_call=call.complete()) for call in self._calls]
        reason = finish_reason_of(self._finish_reason, has_tool_calls=bool(self._calls))
        chunks.append(
            LlmChunk(
                done=True,
                finish_reason=reason,
                prompt_tokens=self._prompt,
                completion_tokens=self._completion,
                model=self._model,
                cache_read_tokens=self._cached,
                served_model=self._served,
            )
        )
        return chunks

    def _fragment(self, fragment: Mapping[str, Any]) -> None:
        function = fragment.get("function") or {}
        name = function.get("name") or ""
        call = self._target(fragment.get("id") or None, fragment.get("index"), name)
        if name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if arguments:
            call.arguments.append(arguments)

    def _target(self, call_id: str | None, index: Any, name: str) -> _PartialCall:
        if call_id is not None:
            known = self._by_id.get(call_id)
            if known is None:
                return self._start(call_id, index)
            if isinstance(index, int):
                self._by_index[index] = known
            return known
        if isinstance(index, int):
            call = self._by_index.get(index)
        else:
            call = self._calls[-1] if self._calls else None
        if call is None or (name and call.name and _is_complete_json(call.arguments)):
            return self._start(None, index)
        return call

    def _start(self, call_id: str | None, index: Any) -> _PartialCall:
        call = _PartialCall(call_id)
        self._calls.append(call)
        if call_id is not None:
            self._by_id[call_id] = call
        if isinstance(index, int):
            self._by_index[index] = call
        return call


def _is_complete_json(fragments: list[str]) -> bool:
    if not fragments:
        return False
    try:
        # Python's reading, NaN included: this only tells where one call's text ends, and
        # the loop refuses arguments that are not JSON (RFC 8259) when it parses them.
        json.loads("".join(fragments))
    except ValueError:
        return False
    return True
