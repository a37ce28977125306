"""Requests, responses, stream chunks and tool definitions of the provider SPI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bloge.llm.messages import LlmMessage, ToolCall

if TYPE_CHECKING:
    from bloge.llm.structured import OutputRequest


#: How the tools an agent's handoffs are offered as begin (``transfer_to_billing``; see
#: :mod:`bloge.agent.handoffs`).
HANDOFF_TOOL_PREFIX = "transfer_to_"


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
    ``response_format`` is passed to providers that support structured output; ``output``
    asks for a typed answer, each provider the strongest way it has (see
    :mod:`bloge.llm.structured`); ``parallel_tool_calls`` ``False`` asks for at most one tool
    call per answer (OpenAI's ``parallel_tool_calls``, Anthropic's
    ``disable_parallel_tool_use``; ``None``: the provider's default, which allows several).

    ``fallback`` names the models tried, in order, when the call to ``model`` fails in a way
    another model may not (an overloaded or unreachable provider: see
    :mod:`bloge.llm.fallback`); a provider itself only ever answers for ``model``.
    ``cache_key`` groups the requests that share a prompt prefix (a conversation) for the
    providers' prompt caches: OpenAI's ``prompt_cache_key``; ``None`` sends none.
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
    parallel_tool_calls: bool | None = None
    output: OutputRequest | None = None
    fallback: tuple[str, ...] = ()
    cache_key: str | None = None


@dataclass(frozen=True, slots=True)
class LlmResponse:
    """A complete model answer: text and/or tool calls, why it stopped, and token usage.

    ``usage_reported`` is false when the provider reported no usage (a stream without a usage
    chunk, a server that leaves ``usage`` out): the token counts are then 0, not measured.

    ``model`` is the model that answered, as it was sent to the provider (after
    ``ModelAliases``, and the fallback chosen when the first model failed); ``""`` when no one
    said. ``prompt_tokens`` counts the whole prompt; of it, ``cache_read_tokens`` were read
    from the provider's prompt cache and ``cache_write_tokens`` written to it (Anthropic's
    ``cache_read_input_tokens`` and ``cache_creation_input_tokens``; OpenAI reports reads only,
    as ``prompt_tokens_details.cached_tokens``). ``fallback_from`` names the models of the
    request tried before ``model``, in order, which failed or were skipped while their circuit
    breaker was open (see :mod:`bloge.llm.fallback`). ``served_model`` is the model as the
    server named it in its answer (a dated snapshot, say; ``None`` when it did not say): a
    traced call's ``gen_ai.response.model``, left out when answers are compared.
    """

    content: str = ""
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    usage_reported: bool = True
    model: str = ""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    fallback_from: tuple[str, ...] = ()
    served_model: str | None = field(default=None, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class LlmChunk:
    """One piece of a streamed answer.

    A chunk carries text (``content``) and/or one complete ``tool_call``. The last chunk has
    ``done=True`` and, when the provider reported them, ``finish_reason`` and usage (the
    cache counts as :class:`LlmResponse` has them), the ``model`` that answered and the
    models tried before it (``fallback_from``), and the ``served_model`` as the server named
    it (left out when chunks are compared). A ``content`` of ``None`` (as OpenAI's deltas
    carry ``null``) reads as no text.
    """

    content: str = ""
    done: bool = False
    tool_call: ToolCall | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str = ""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    fallback_from: tuple[str, ...] = ()
    served_model: str | None = field(default=None, compare=False)


def effective_finish_reason(reason: str | None, *, has_tool_calls: bool) -> str:
    """A stream's finish reason; when the provider left it out, infer it from the calls."""
    if reason:
        return reason
    return "tool_calls" if has_tool_calls else "stop"
