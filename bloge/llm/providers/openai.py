"""OpenAI Chat Completions wire format, both ways: neutral requests out, responses in.

Pure functions shared by the streaming and non-streaming paths of
:class:`~bloge.llm.providers.openai_provider.OpenAIChatProvider`; no I/O here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from bloge.core.ids import new_id
from bloge.llm.messages import ImagePart, LlmMessage, TextPart, ToolCall
from bloge.llm.providers.server_errors import message_of, truncate
from bloge.llm.providers.wire import WireFormatError, count
from bloge.llm.types import LlmRequest, LlmResponse, ToolDefinition, effective_finish_reason

#: Longest ``prompt_cache_key`` sent as it is; a longer one is sent as its SHA-256 (64 hex
#: digits), which groups the same requests.
MAX_CACHE_KEY = 64

#: tool_choice values OpenAI takes as they are; anything else names a tool.
_TOOL_CHOICE_MODES = ("auto", "none", "required")


def chat_request_body(
    request: LlmRequest, *, stream: bool, max_tokens: int | None = None,
    prompt_cache_key: bool = False,
) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request``.

    Optional fields are left out when unset, so that servers apply their own defaults, with
    two exceptions: ``tool_choice`` travels with every list of tools (``"auto"`` unless the
    request chose), since some compatible servers (llama-cpp-python) drop the tools of a
    request that has none; and ``max_tokens`` applies when the request sets none. A
    streaming body asks for ``stream_options.include_usage`` so that usage arrives in the
    stream's last chunk. With ``prompt_cache_key``, the request's ``cache_key`` travels as
    ``prompt_cache_key`` (a key longer than :data:`MAX_CACHE_KEY` as its SHA-256).
    """
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [message_to_wire(m) for m in request.messages],
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    limit = request.max_tokens if request.max_tokens is not None else max_tokens
    if limit is not None:
        body["max_tokens"] = limit
    if request.stop:
        body["stop"] = list(request.stop)
    if request.tools:
        body["tools"] = [tool_to_wire(t) for t in request.tools]
        # OpenAI rejects tool_choice without tools, so it only travels with them.
        body["tool_choice"] = tool_choice_to_wire(request.tool_choice or "auto")
        if request.parallel_tool_calls is not None:  # like tool_choice: only with tools
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        body["response_format"] = dict(request.response_format)
    if request.seed is not None:
        body["seed"] = request.seed
    if prompt_cache_key and request.cache_key:
        body["prompt_cache_key"] = cache_key_to_wire(request.cache_key)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def cache_key_to_wire(key: str) -> str:
    """``key`` as a ``prompt_cache_key``: itself, or its SHA-256 when it is too long."""
    if len(key) <= MAX_CACHE_KEY:
        return key
    return hashlib.sha256(key.encode()).hexdigest()


def message_to_wire(message: LlmMessage) -> dict[str, Any]:
    """One neutral message as an OpenAI chat message.

    OpenAI has no failure flag on tool messages, so ``is_error`` travels only in the text.
    """
    match message.role:
        case "system":
            return {"role": "system", "content": message.content}
        case "user":
            if message.parts:
                return {"role": "user", "content": [_part_to_wire(p) for p in message.parts]}
            return {"role": "user", "content": message.content}
        case "assistant":
            if not message.tool_calls:
                return {"role": "assistant", "content": message.content}
            return {
                "role": "assistant",
                # OpenAI takes null or "" here; llama-cpp-python answers 500 to null.
                "content": message.content,
                "tool_calls": [tool_call_to_wire(c) for c in message.tool_calls],
            }
        case "tool":
            return {
                "role": "tool",
                "tool_call_id": message.tool_call_id or "",
                "content": message.content,
            }


def tool_call_to_wire(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments or "{}"},
    }


def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = dict(tool.parameters)
    return {"type": "function", "function": function}


def tool_choice_to_wire(choice: str) -> str | dict[str, Any]:
    """``"auto"``, ``"none"`` and ``"required"`` as they are; a tool name forces that tool."""
    if choice in _TOOL_CHOICE_MODES:
        return choice
    return {"type": "function", "function": {"name": choice}}


def _part_to_wire(part: TextPart | ImagePart) -> dict[str, Any]:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart(url=url):
            return {"type": "image_url", "image_url": {"url": url}}


def parse_chat_response(body: Mapping[str, Any], *, model: str = "") -> LlmResponse:
    """The neutral answer in a ``chat.completion`` object (the first choice), answered by
    ``model`` (the model the request named)."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        # Gateways relaying another server's failure answer 200 with an error body.
        said = message_of(body) if "error" in body else None
        raise WireFormatError("the response has no choices"
                              + (f"; it holds an error: {truncate(said)}" if said else ""))
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise WireFormatError("the first choice has no message")
    calls = tuple(tool_call_from_wire(c) for c in message.get("tool_calls") or ())
    prompt, completion = usage_from_wire(body.get("usage"))
    return LlmResponse(
        # A refusal arrives instead of content; the caller should still see what was said.
        content=message.get("content") or message.get("refusal") or "",
        finish_reason=finish_reason_of(choice.get("finish_reason"), has_tool_calls=bool(calls)),
        prompt_tokens=prompt or 0,
        completion_tokens=completion or 0,
        usage_reported=prompt is not None or completion is not None,
        tool_calls=calls,
        model=model,
        cache_read_tokens=cached_from_wire(body.get("usage")),
        served_model=named_model(body),
    )


def named_model(payload: Mapping[str, Any]) -> str | None:
    """The model a response names (``"model"``), when it names one."""
    named = payload.get("model")
    return named if isinstance(named, str) and named else None


def finish_reason_of(reason: Any, *, has_tool_calls: bool) -> str:
    """The server's finish reason, except that an answer with tool calls finishes with
    ``tool_calls``: OpenAI says ``stop`` when ``tool_choice`` forced a function, and Ollama
    always does; a missing reason is inferred the same way."""
    if has_tool_calls and reason in (None, "", "stop"):
        return "tool_calls"
    return effective_finish_reason(
        reason if isinstance(reason, str) else None, has_tool_calls=has_tool_calls
    )


def tool_call_from_wire(call: Any) -> ToolCall:
    """One complete ``tool_calls`` entry; a call without arguments gets ``"{}"``."""
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        raise WireFormatError(f"malformed tool call: {call!r}")
    function = call["function"]
    name = function.get("name")
    if not name:
        raise WireFormatError(f"a tool call has no function name: {call!r}")
    return ToolCall(
        id=call.get("id") or new_call_id(),
        name=str(name),
        arguments=function.get("arguments") or "{}",
    )


def usage_from_wire(usage: Any) -> tuple[int | None, int | None]:
    """``(prompt_tokens, completion_tokens)`` of a ``usage`` object; ``None`` when absent."""
    if not isinstance(usage, Mapping):
        return None, None
    return count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))


def cached_from_wire(usage: Any) -> int:
    """The prompt tokens read from OpenAI's prompt cache: ``usage.prompt_tokens_details.
    cached_tokens`` (part of ``prompt_tokens``); 0 when the server leaves it out."""
    if not isinstance(usage, Mapping):
        return 0
    details = usage.get("prompt_tokens_details")
    if not isinstance(details, Mapping):
        return 0
    return count(details.get("cached_tokens")) or 0


def new_call_id() -> str:
    """An id for a tool call the server sent without one (some compatible servers do)."""
    return f"call_{new_id()[:24]}"
