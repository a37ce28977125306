"""Anthropic Messages wire format, both ways: request bodies out, responses in.

Pure functions; the runtime chapter's ``buildMessagesRequest`` is
:func:`build_messages_request`. The conversation itself is translated (and repaired) by
:mod:`bloge.llm.providers.anthropic_messages`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.llm.messages import LlmMessage, ToolCall
from bloge.llm.providers.anthropic_messages import wire_messages
from bloge.llm.providers.server_errors import message_of
from bloge.llm.providers.wire import WireFormatError, compact_json, count
from bloge.llm.types import LlmRequest, LlmResponse, ToolDefinition, effective_finish_reason

#: Anthropic's stop reasons that have a neutral name; the others pass through unchanged.
FINISH_REASONS = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}

_CACHED_INPUT = ("cache_creation_input_tokens", "cache_read_input_tokens")

_TOOL_CHOICES: dict[str, dict[str, str]] = {
    "auto": {"type": "auto"},
    "none": {"type": "none"},
    "required": {"type": "any"},
}


def build_messages_request(
    model: str,
    max_tokens: int,
    system: str,
    messages: Sequence[LlmMessage],
    tools: Sequence[ToolDefinition],
    *,
    temperature: float | None = None,
    stop: Sequence[str] = (),
    tool_choice: str | None = None,
    parallel_tool_calls: bool | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages``.

    ``system`` and the content of every system message in ``messages`` (in that order,
    separated by blank lines) become the top-level ``system``. ``messages`` may be any view
    an agent loop produces: the result is always a valid conversation (see
    :func:`~bloge.llm.providers.anthropic_messages.wire_messages`). Tools carry their JSON
    schema as ``input_schema``; ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or a
    tool name, and is sent only with tools; ``parallel_tool_calls=False`` asks for one tool
    call per answer (``disable_parallel_tool_use``, with ``"auto"`` when no choice is given).
    Unset options are left out.
    """
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    prompts = [system, *(m.content for m in messages if m.role == "system")]
    system_text = "\n\n".join(p for p in prompts if p.strip())
    if system_text:
        body["system"] = system_text
    body["messages"] = wire_messages(messages)
    if tools:
        body["tools"] = [tool_to_wire(t) for t in tools]
        if parallel_tool_calls is False and tool_choice != "none":
            body["tool_choice"] = {**tool_choice_to_wire(tool_choice or "auto"),
                                   "disable_parallel_tool_use": True}
        elif tool_choice is not None:
            body["tool_choice"] = tool_choice_to_wire(tool_choice)
    if temperature is not None:
        body["temperature"] = temperature
    if stop:
        body["stop_sequences"] = list(stop)
    return body


def messages_request_for(
    request: LlmRequest, *, model: str, max_tokens: int, system: str = ""
) -> dict[str, Any]:
    """:func:`build_messages_request` for a neutral request, whose own ``model`` and
    ``max_tokens`` win over the defaults given here. Anthropic has no ``response_format`` and
    no ``seed``; they are not sent."""
    return build_messages_request(
        request.model or model,
        request.max_tokens if request.max_tokens is not None else max_tokens,
        system,
        request.messages,
        request.tools,
        temperature=request.temperature,
        stop=request.stop,
        tool_choice=request.tool_choice,
        parallel_tool_calls=request.parallel_tool_calls,
    )


def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    # The API insists on an object schema; a schema that omits the type means one.
    wire["input_schema"] = {"type": "object", **tool.parameters}
    return wire


def tool_choice_to_wire(choice: str) -> dict[str, Any]:
    return _TOOL_CHOICES.get(choice) or {"type": "tool", "name": choice}


def parse_messages_response(body: Mapping[str, Any], *, model: str = "") -> LlmResponse:
    """The neutral answer in a ``message`` object: its text blocks joined, its ``tool_use``
    blocks as tool calls (``input`` as compact JSON), finish reason and usage (the cache's
    reads and writes among them); answered by ``model``, else the one the body names."""
    if body.get("type") == "error":
        raise WireFormatError(message_of(body) or "the server answered with an error")
    content = body.get("content")
    if not isinstance(content, list):
        raise WireFormatError("the response has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(tool_call_of(block))
    usage = body.get("usage")
    prompt, completion = usage_from_wire(usage)
    read, written = cache_from_wire(usage)
    named = body.get("model")
    return LlmResponse(
        content="".join(texts),
        finish_reason=finish_reason_of(body.get("stop_reason"), has_tool_calls=bool(calls)),
        prompt_tokens=prompt or 0,
        completion_tokens=completion or 0,
        usage_reported=prompt is not None or completion is not None,
        tool_calls=tuple(calls),
        model=model or (named if isinstance(named, str) else ""),
        served_model=named if isinstance(named, str) and named else None,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def tool_call_of(block: Mapping[str, Any], arguments: str = "") -> ToolCall:
    """The call in a ``tool_use`` block; its arguments are ``arguments`` when streamed, else
    the block's ``input`` as compact JSON (``"{}"`` when it has none)."""
    call_id, name, value = block.get("id"), block.get("name"), block.get("input")
    if not call_id or not name:
        raise WireFormatError(f"a tool_use block lacks its id or name: {dict(block)!r}")
    return ToolCall(str(call_id), str(name), arguments or (compact_json(value) if value else "{}"))


def finish_reason_of(stop_reason: Any, *, has_tool_calls: bool) -> str:
    """``end_turn`` → ``stop``, ``tool_use`` → ``tool_calls``, ``max_tokens`` → ``length``;
    other reasons (``stop_sequence``, ``refusal``, …) unchanged; inferred when missing."""
    if not isinstance(stop_reason, str) or not stop_reason:
        return effective_finish_reason(None, has_tool_calls=has_tool_calls)
    return FINISH_REASONS.get(stop_reason, stop_reason)


def usage_from_wire(usage: Any) -> tuple[int | None, int | None]:
    """``(prompt_tokens, completion_tokens)``; ``None`` for what the usage leaves out.

    Anthropic counts cached prompt tokens apart from ``input_tokens``; the prompt is all three.
    """
    if not isinstance(usage, Mapping):
        return None, None
    fresh = count(usage.get("input_tokens"))
    if fresh is None:
        return None, count(usage.get("output_tokens"))
    cached = sum(count(usage.get(key)) or 0 for key in _CACHED_INPUT)
    return fresh + cached, count(usage.get("output_tokens"))


def cache_from_wire(usage: Any) -> tuple[int, int]:
    """``(read, written)``: the prompt tokens read from the cache
    (``cache_read_input_tokens``) and written to it (``cache_creation_input_tokens``)."""
    if not isinstance(usage, Mapping):
        return 0, 0
    return (count(usage.get("cache_read_input_tokens")) or 0,
            count(usage.get("cache_creation_input_tokens")) or 0)
