"""Anthropic prompt caching: ``cache_control`` breakpoints placed on a Messages body.

Anthropic caches a request's prefix up to each block marked ``"cache_control": {"type":
"ephemeral"}``, in the order the API reads a request: ``tools``, then ``system``, then
``messages``; a request may mark at most :data:`MAX_BREAKPOINTS` blocks. A later request whose
prefix up to a breakpoint is byte-identical reads it from the cache (at a tenth of the input
price) instead of paying for it again; writing costs a quarter more than plain input. A prefix
shorter than the model's minimum (1024 tokens for most) is simply not cached.

:func:`with_breakpoints` marks, in this order of priority:

1. the last tool: the tool definitions, the same on every call of an agent;
2. the system prompt: tools and instructions together;
3. the last block of the conversation: what the next call of the run (or of the thread)
   reads back, since it repeats this request and adds to it;
4. the last block before the latest assistant message: the end of the previous call's
   conversation, so that this call reads what that one wrote even when the latest answer
   and its tool results add more blocks than the API looks back over (20) for an earlier
   breakpoint.

A memory that drops old messages changes the prefix from its first message on: see the block
windows of ``sliding_window`` (``bloge.agent.memory``), which keep it for several turns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Most ``cache_control`` breakpoints the API accepts in one request.
MAX_BREAKPOINTS = 4

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}


def with_breakpoints(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` (a Messages request) with cache breakpoints on its stable prefix, as the
    module says; ``body`` itself is left as it was. A body that marks any block already is
    returned unchanged: the caller placed its own."""
    if _marked(body):
        return dict(body)
    marked = dict(body)
    left = MAX_BREAKPOINTS
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        marked["tools"] = [*tools[:-1], {**tools[-1], "cache_control": dict(EPHEMERAL)}]
        left -= 1
    system = body.get("system")
    if isinstance(system, str) and system:
        marked["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
        left -= 1
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        marked["messages"] = _conversation_marked(messages, left)
    return marked


def _conversation_marked(messages: list[Any], left: int) -> list[Any]:
    positions = [len(messages) - 1]
    latest_answer = next((index for index in range(len(messages) - 1, -1, -1)
                          if messages[index].get("role") == "assistant"), None)
    if latest_answer is not None and latest_answer > 0:
        positions.append(latest_answer - 1)
    out = list(messages)
    for position in dict.fromkeys(positions[:left]):
        out[position] = _last_block_marked(out[position])
    return out


def _last_block_marked(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks: list[Any] = ([{"type": "text", "text": content}] if isinstance(content, str)
                         else list(content) if isinstance(content, list) else [])
    if not blocks:
        return dict(message)
    blocks[-1] = {**blocks[-1], "cache_control": dict(EPHEMERAL)}
    return {**message, "content": blocks}


def _marked(body: Mapping[str, Any]) -> bool:
    system = body.get("system")
    blocks = [*(body.get("tools") or ()), *(system if isinstance(system, list) else ())]
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, list):
            blocks.extend(content)
    return any(isinstance(block, Mapping) and "cache_control" in block for block in blocks)
