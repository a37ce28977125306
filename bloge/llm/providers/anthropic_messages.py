"""Neutral conversations as Anthropic ``messages``: always a request the API accepts.

The Messages API is stricter than the conversations an agent loop holds: it wants the first
message from the user, user and assistant strictly alternating, every ``tool_use`` answered by
a ``tool_result`` at the start of the very next message, no ``tool_result`` without its
``tool_use``, and no empty text. A memory view after pruning or a resumed checkpoint may break
any of these, so :func:`wire_messages` repairs rather than trusting:

1. system messages are left out (they go to the top-level ``system``);
2. every other message becomes blocks: text and images for the user, text and ``tool_use``
   for the assistant, one ``tool_result`` (a user block) per tool message; empty text is
   dropped, and a message left with no blocks disappears;
3. neighbours of the same role are merged into one message;
4. the message after an assistant ``tool_use`` starts with one ``tool_result`` per call, in
   call order; a missing result becomes an ``is_error`` result saying it is unavailable, and a
   result whose call is not in the message before becomes plain text;
5. a conversation that does not start with the user starts with :data:`CONTINUATION`;
6. a final assistant message (a prefill) loses trailing whitespace, which the API rejects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bloge.core.codec import parse_json
from bloge.llm.messages import ImagePart, LlmMessage, TextPart

Block = dict[str, Any]
WireRole = Literal["user", "assistant"]

#: The user message put first when a conversation would start with the assistant.
CONTINUATION = "(conversation continues)"
#: The content of the error result that answers a tool call whose result is missing.
MISSING_RESULT = "The result of this tool call is unavailable."


@dataclass(slots=True)
class _Turn:
    role: WireRole
    blocks: list[Block] = field(default_factory=list)


def wire_messages(messages: Iterable[LlmMessage]) -> list[dict[str, Any]]:
    """The ``messages`` array of a Messages request for a neutral conversation."""
    turns = _merged(_turn_of(m) for m in messages if m.role != "system")
    turns = _answered(turns)
    if not turns or turns[0].role != "user":
        turns.insert(0, _Turn("user", [text_block(CONTINUATION)]))
    _trim_prefill(turns)
    return [{"role": t.role, "content": _content(t.blocks)} for t in turns]


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def _turn_of(message: LlmMessage) -> _Turn:
    match message.role:
        case "user":
            parts = message.parts or (TextPart(message.content),)
            return _Turn("user", [b for b in map(_part_block, parts) if b is not None])
        case "assistant":
            blocks = [text_block(message.content)] if message.content.strip() else []
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c.arguments)}
                for c in message.tool_calls
            )
            return _Turn("assistant", blocks)
        case "tool":
            result: Block = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
            if message.content:
                result["content"] = message.content
            if message.is_error:
                result["is_error"] = True
            return _Turn("user", [result])
        case "system":
            raise AssertionError("system messages are lifted out before this")


def _part_block(part: TextPart | ImagePart) -> Block | None:
    match part:
        case TextPart(text=text):
            return text_block(text) if text.strip() else None
        case ImagePart(url=url, media_type=media_type):
            return {"type": "image", "source": _image_source(url, media_type)}


def _image_source(url: str, media_type: str | None) -> dict[str, str]:
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        declared = header[len("data:") :].split(";")[0]
        return {"type": "base64", "media_type": media_type or declared, "data": data}
    return {"type": "url", "url": url}


def _input(arguments: str) -> Any:
    # The API wants an object. Arguments the model botched cannot be repaired here; the loop
    # has already told the model so in the tool result, so an empty object is enough.
    try:
        parsed = parse_json(arguments) if arguments else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _merged(turns: Iterable[_Turn]) -> list[_Turn]:
    out: list[_Turn] = []
    for turn in turns:
        if not turn.blocks:
            continue
        if out and out[-1].role == turn.role:
            out[-1].blocks.extend(turn.blocks)
        else:
            out.append(turn)
    return out


def _answered(turns: list[_Turn]) -> list[_Turn]:
    out: list[_Turn] = []
    for turn in turns:
        if turn.role == "user":
            out.append(_Turn("user", _answer(_pending_calls(out), turn.blocks)))
        else:
            out.append(turn)
    calls = _pending_calls(out)
    if calls:
        out.append(_Turn("user", _answer(calls, [])))
    return out


def _pending_calls(turns: list[_Turn]) -> list[str]:
    if not turns or turns[-1].role != "assistant":
        return []
    return [b["id"] for b in turns[-1].blocks if b["type"] == "tool_use"]


def _answer(calls: list[str], blocks: list[Block]) -> list[Block]:
    """``blocks`` rearranged so that they open with exactly one result per call in ``calls``."""
    results: dict[str, Block] = {}
    rest: list[Block] = []
    for block in blocks:
        if block["type"] != "tool_result":
            rest.append(block)
        elif block["tool_use_id"] in calls and block["tool_use_id"] not in results:
            results[block["tool_use_id"]] = block
        else:
            rest.append(_orphan_text(block))
    answers = [results.get(call_id) or _missing_result(call_id) for call_id in calls]
    return answers + rest


def _missing_result(call_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": MISSING_RESULT,
        "is_error": True,
    }


def _orphan_text(result: Block) -> Block:
    # Its tool_use was pruned or never existed; the API would reject it as a result, but what
    # the tool said may still matter to the model.
    outcome = "error" if result.get("is_error") else "result"
    return text_block(
        f"[{outcome} of tool call {result['tool_use_id']}]: {result.get('content', '')}"
    )


def _trim_prefill(turns: list[_Turn]) -> None:
    last = turns[-1]
    if last.role == "assistant" and last.blocks[-1]["type"] == "text":
        # Never empty: whitespace-only text was dropped when the blocks were made.
        last.blocks[-1] = text_block(last.blocks[-1]["text"].rstrip())


def _content(blocks: list[Block]) -> str | list[Block]:
    # A lone text block travels as a plain string, the form the API documents first.
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks
