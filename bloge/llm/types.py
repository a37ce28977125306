"""Requests, responses, stream chunks and tool definitions of the provider SPI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bloge.llm.messages import LlmMessage, ToolCall


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What a model sees of a tool: its name, description and JSON-schema ``parameters``."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """One chat-completion request, provider-neutral.

    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or a tool name (``None``: the
    provider's default, which lets the model choose); ``seed`` asks for repeatable sampling
    where the provider supports it (OpenAI's, best effort; Anthropic has none);
    ``response_format`` is passed to providers that support structured output.
    """

    model: str
    messages: tuple[LlmMessage, ...]
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    tool_choice: str | None = None
    response_format: Mapping[str, Any] | None = None
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class LlmResponse:
    """A complete model answer: text and/or tool calls, why it stopped, and token usage.

    ``usage_reported`` is false when the provider reported no usage (a stream without a usage
    chunk, a server that leaves ``usage`` out): the token counts are then 0, not measured.
    ``model`` is the model that answered, as the server names it (``None``: it did not say);
    it is metadata, left out when answers are compared.
    """

    content: str = ""
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    usage_reported: bool = True
    model: str | None = field(default=None, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class LlmChunk:
    """One piece of a streamed answer.

    A chunk carries text (``content``) and/or one complete ``tool_call``. The last chunk has
    ``done=True`` and, when the provider reported them, ``finish_reason``, usage and the
    ``model`` that answered (left out when chunks are compared). A ``content`` of ``None``
    (as OpenAI's deltas carry ``null``) reads as no text.
    """

    content: str = ""
    done: bool = False
    tool_call: ToolCall | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = field(default=None, compare=False)


def effective_finish_reason(reason: str | None, *, has_tool_calls: bool) -> str:
    """A stream's finish reason; when the provider left it out, infer it from the calls."""
    if reason:
        return reason
    return "tool_calls" if has_tool_calls else "stop"
