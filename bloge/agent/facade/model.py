"""The runtime chapter's model shape, ``chat(messages, tools)``, as a bloge ``LlmProvider``.

The chapter's ``LlmProvider`` answers a conversation with ``Text(t)`` or ``ToolUse(name,
args)``. In Python that model is an object with a ``chat(messages, tools)`` method, or just
such a function, returning a ``str`` (the text) or a :class:`ToolUse`. :func:`as_provider`
turns it into a bloge :class:`~bloge.llm.LlmProvider`, so that the agent's ``llmChat``
operator and the engine see what they see with any other provider.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from bloge.core.errors import BlogeUsageError
from bloge.core.workers import DEFAULT_WORKERS
from bloge.llm.chunks import response_chunks
from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse, ToolDefinition


@dataclass(frozen=True, slots=True)
class ToolUse:
    """The chapter's ``ToolUse(name, args)``: call the tool ``name`` with ``args``, the JSON
    text of its arguments object."""

    name: str
    args: str = "{}"


ChatAnswer: TypeAlias = str | ToolUse | LlmResponse
"""A chat model's answer: the text, a tool use, or a whole bloge ``LlmResponse``."""

ChatFunction: TypeAlias = Callable[
    [list[LlmMessage], list[ToolDefinition]], ChatAnswer | Awaitable[ChatAnswer]
]


@runtime_checkable
class ChatModel(Protocol):
    """The runtime chapter's ``LlmProvider``: ``chat`` answers the conversation so far.

    ``messages`` are the conversation's :class:`~bloge.llm.LlmMessage` values (the user's
    input, the model's tool uses, the tools' results); ``tools`` the
    :class:`~bloge.llm.ToolDefinition` of every tool. ``chat`` may be a coroutine function;
    a sync one runs on a worker thread, so that it may block.
    """

    def chat(self, messages: list[LlmMessage], tools: list[ToolDefinition],
             ) -> ChatAnswer | Awaitable[ChatAnswer]: ...


def as_provider(llm: LlmProvider | ChatModel | ChatFunction) -> LlmProvider:
    """``llm`` as a bloge provider: a provider as it is; a :class:`ChatModel` or a chat
    function through :class:`ChatModelProvider`."""
    if isinstance(llm, LlmProvider):
        return llm
    if isinstance(llm, ChatModel):
        return ChatModelProvider(llm.chat)
    if callable(llm):
        return ChatModelProvider(llm)
    raise BlogeUsageError(
        f"an Agent's llm must be a bloge LlmProvider, an object with chat(messages, tools) "
        f"or such a function, got {type(llm).__name__}"
    )


class ChatModelProvider:
    """An :class:`~bloge.llm.LlmProvider` that asks ``chat(messages, tools)``.

    A :class:`ToolUse` becomes one tool call, with the id ``call_<n>`` for the conversation's
    n-th tool round; :meth:`stream_chat` replays the whole answer as chunks.
    """

    __slots__ = ("_chat", "_is_async")

    def __init__(self, chat: ChatFunction) -> None:
        self._chat = chat
        self._is_async = inspect.iscoroutinefunction(chat)

    async def chat(self, request: LlmRequest) -> LlmResponse:
        messages, tools = list(request.messages), list(request.tools)
        if self._is_async:
            answer = self._chat(messages, tools)
        else:
            answer = await DEFAULT_WORKERS.run(self._chat, messages, tools)
        return _response(await answer if inspect.isawaitable(answer) else answer, request)

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        for chunk in response_chunks(await self.chat(request)):
            yield chunk

    def __repr__(self) -> str:
        return f"ChatModelProvider({getattr(self._chat, '__qualname__', self._chat)!r})"


def _response(answer: object, request: LlmRequest) -> LlmResponse:
    match answer:
        case LlmResponse():
            return answer
        case str():
            return LlmResponse(content=answer)
        case ToolUse(name, args) if isinstance(name, str) and isinstance(args, str):
            rounds = sum(1 for message in request.messages if message.tool_calls)
            call = ToolCall(f"call_{rounds + 1}", name, args)
            return LlmResponse(finish_reason="tool_calls", tool_calls=(call,))
        case ToolUse(name, args) if not isinstance(name, str):
            raise BlogeUsageError(
                f"the chat model answered a ToolUse whose name is a {type(name).__name__} "
                f"({name!r}); the name is the tool's name, a str")
        case ToolUse(name, args):
            raise BlogeUsageError(
                f"the chat model answered ToolUse({name!r}, …) with args of type "
                f"{type(args).__name__}; args is the JSON text of the arguments: "
                f"ToolUse({name!r}, json.dumps(…))")
    raise BlogeUsageError(
        f"the chat model answered with type {type(answer).__name__}; return a str (the answer), "
        "ToolUse(name, args) with args the JSON text of the arguments, or an LlmResponse"
    )
