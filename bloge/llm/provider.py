"""The ``LlmProvider`` protocol: what a chat-model client implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse


@runtime_checkable
class LlmProvider(Protocol):
    """A chat model. ``stream_chat`` returns an async iterator; closing it early (``aclose``)
    must release the underlying stream."""

    async def chat(self, request: LlmRequest) -> LlmResponse: ...

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]: ...
