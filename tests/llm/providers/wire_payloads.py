"""Payloads in the real wire formats, shaped like recorded answers of the two APIs.

Every object carries the fields the real servers send (ids, ``object``/``type``, ``created``,
``model``, ``logprobs``, ``system_fingerprint``, usage details, ``stop_sequence`` …), so the
providers are tested against what they will meet, not against a minimal guess.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

OPENAI_MODEL = "gpt-4o-2024-08-06"
ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"


@dataclass(frozen=True, slots=True)
class WireCall:
    """A tool call as a test script writes it; ``fragments`` is how its arguments stream."""

    id: str
    name: str
    fragments: tuple[str, ...] = ()

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)


# -- OpenAI Chat Completions -------------------------------------------------------------


def openai_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def openai_completion(
    content: str | None,
    *,
    calls: Sequence[WireCall] = (),
    finish_reason: str = "stop",
    prompt: int = 19,
    completion: int = 17,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None,
                               "annotations": []}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": OPENAI_MODEL,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish_reason}],
        "usage": openai_usage(prompt, completion),
        "service_tier": "default",
        "system_fingerprint": "fp_f9f4fb6dbf",
    }


def openai_chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion.chunk",
        "created": 1741570283,
        "model": OPENAI_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_f9f4fb6dbf",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None,
                     "finish_reason": finish_reason}] if choices else [],
        "usage": usage,
    }


def openai_text_delta(text: str) -> dict[str, Any]:
    return openai_chunk({"content": text})


def openai_call_fragment(
    index: int | None, *,
    id: str | None = None,  # noqa: A002 -- the wire field's name
    name: str | None = None, arguments: str = "",
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": {"arguments": arguments}}
    if index is not None:
        fragment["index"] = index
    if id is not None:
        fragment["id"] = id
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    return openai_chunk({"tool_calls": [fragment]})


def openai_stream(
    pieces: Iterable[str] = (),
    *,
    calls: Sequence[WireCall] = (),
    finish_reason: str | None = None,
    prompt: int = 19,
    completion: int = 17,
) -> list[dict[str, Any]]:
    """The chunks OpenAI sends: a role chunk, text deltas, each call's fragments (id and name
    first, then arguments), the finish chunk, and the usage chunk with empty choices."""
    chunks = [openai_chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [openai_text_delta(p) for p in pieces]
    for index, call in enumerate(calls):
        chunks.append(openai_call_fragment(index, id=call.id, name=call.name))
        chunks += [openai_call_fragment(index, arguments=f) for f in call.fragments]
    reason = finish_reason or ("tool_calls" if calls else "stop")
    chunks.append(openai_chunk({}, finish_reason=reason))
    chunks.append(openai_chunk(usage=openai_usage(prompt, completion), choices=False))
    return chunks


def openai_sse(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


# -- Anthropic Messages --------------------------------------------------------------------


def anthropic_usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def anthropic_message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 25,
    output_tokens: int = 15,
) -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC_MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": anthropic_usage(input_tokens, output_tokens),
    }


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(call: WireCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name,
            "input": json.loads(call.arguments or "{}")}


def anthropic_events(
    pieces: Iterable[str] = (),
    *,
    calls: Sequence[WireCall] = (),
    stop_reason: str | None = None,
    input_tokens: int = 25,
    output_tokens: int = 15,
    ping: bool = True,
) -> list[dict[str, Any]]:
    """The events Anthropic sends: ``message_start``, a ``ping``, a text block (when there are
    pieces), one ``tool_use`` block per call whose ``input_json_delta`` starts empty, then
    ``message_delta`` and ``message_stop``."""
    start = anthropic_message([], input_tokens=input_tokens, output_tokens=1)
    start.update(stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    index = 0
    pieces = list(pieces)
    if pieces:
        events.append({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
        if ping:
            events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": p}} for p in pieces]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    elif ping:
        events.append({"type": "ping"})
    for call in calls:
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": call.id, "name": call.name,
                                         "input": {}}})
        events += [{"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": f}}
                   for f in ("", *call.fragments)]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    reason = stop_reason or ("tool_use" if calls else "end_turn")
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": reason, "stop_sequence": None},
                   "usage": {"output_tokens": output_tokens}})
    events.append({"type": "message_stop"})
    return events


def anthropic_sse(events: Iterable[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


# -- HTTP ----------------------------------------------------------------------------------


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def sse_response(body: bytes, *, piece: int | None = None) -> httpx.Response:
    """A ``text/event-stream`` response; with ``piece`` the body arrives in reads of that many
    bytes, so events and even UTF-8 characters straddle reads."""
    headers = {"content-type": "text/event-stream; charset=utf-8"}
    if piece is None:
        return httpx.Response(200, headers=headers, content=body)
    return httpx.Response(200, headers=headers, content=_pieces(body, piece))


async def _pieces(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}


@dataclass
class Script:
    """A MockTransport handler that answers with its replies in order and records requests.

    A reply is an ``httpx.Response``, or a callable taking the request (to raise a transport
    error, or to answer from what was sent).
    """

    replies: list[Any]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        return reply if isinstance(reply, httpx.Response) else reply(request)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))

    def body(self, number: int = 0) -> Any:
        return json.loads(self.requests[number].content)


def fail_with(error: type[httpx.TransportError], message: str = "boom") -> Any:
    def raise_it(request: httpx.Request) -> httpx.Response:
        raise error(message, request=request)

    return raise_it
