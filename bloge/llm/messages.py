"""Provider-neutral chat messages: what the agent loop and every provider adapter exchange."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to call one tool; ``arguments`` is the JSON text the model wrote."""

    id: str
    name: str
    arguments: str = "{}"


@dataclass(frozen=True, slots=True)
class TextPart:
    """A text segment of a multi-part message."""

    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image, by URL (``https:`` or a ``data:`` URL), in a multi-part message."""

    url: str
    media_type: str | None = None


ContentPart: TypeAlias = TextPart | ImagePart


@dataclass(frozen=True, slots=True)
class LlmMessage:
    """One chat message.

    ``content`` is the text; ``parts`` optionally carries multi-part content (text and images)
    for providers that accept it. An assistant message may carry ``tool_calls``; a ``tool``
    message answers one call through ``tool_call_id``, and ``is_error`` says the tool failed.
    """

    role: Role
    content: str = ""
    parts: tuple[ContentPart, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False

    @classmethod
    def system(cls, content: str) -> LlmMessage:
        return cls("system", content)

    @classmethod
    def user(cls, content: str | Sequence[ContentPart]) -> LlmMessage:
        if isinstance(content, str):
            return cls("user", content)
        parts = tuple(content)
        text = "".join(p.text for p in parts if isinstance(p, TextPart))
        return cls("user", text, parts=parts)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Sequence[ToolCall] = ()) -> LlmMessage:
        return cls("assistant", content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, tool_call_id: str, content: str, *, is_error: bool = False) -> LlmMessage:
        return cls("tool", content, tool_call_id=tool_call_id, is_error=is_error)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form that leaves out empty fields; :meth:`from_dict` reverses it."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.parts:
            out["parts"] = [_part_to_dict(p) for p in self.parts]
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.is_error:
            out["is_error"] = True
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, strict: bool = True) -> LlmMessage:
        """Rebuild a message from :meth:`to_dict`'s form; ``ValueError`` naming the field when
        it is malformed or lacks what its role must send a model: a system or user message
        its ``content`` (a user message may have ``parts`` instead), an assistant message
        ``content`` or ``tool_calls``, a tool message ``tool_call_id`` and ``content``.

        ``strict=False`` reads what bloge itself recorded (a thread's log, a run's input) as
        it was written, lacking or not: a message given as an ``LlmMessage`` is taken
        unchecked, and its record must stay readable."""
        role = data.get("role")
        if role not in ROLES:
            raise ValueError(f"message role must be one of {ROLES}, got {role!r}")
        content = data.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"message content must be a string, got {type(content).__name__}")
        calls = _tool_calls_from(data.get("tool_calls"))
        parts = _parts_from(data.get("parts"))
        call_id = data.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise ValueError(f"tool_call_id must be a string, got {type(call_id).__name__}")
        lacking = _lacking(role, content, parts=parts, calls=calls, call_id=call_id)
        if lacking is not None and strict:
            raise ValueError(lacking)
        return cls(role, content or "", parts=parts, tool_calls=calls, tool_call_id=call_id,
                   is_error=bool(data.get("is_error", False)))


def _lacking(role: Role, content: str | None, *, parts: tuple[ContentPart, ...],
             calls: tuple[ToolCall, ...], call_id: str | None) -> str | None:
    """What a message of ``role`` needs and lacks (an empty text is a text), if anything."""
    if role == "system" and content is None:
        return 'a system message needs "content", its text'
    if role == "user" and content is None and not parts:
        return 'a user message needs "content", its text (or "parts")'
    if role == "assistant" and content is None and not calls:
        return 'an assistant message needs "content" or "tool_calls"'
    if role == "tool" and not call_id:
        return 'a tool message needs "tool_call_id", the id of the call it answers'
    if role == "tool" and content is None:
        return 'a tool message needs "content", the tool\'s result'
    return None


def _tool_calls_from(calls: object) -> tuple[ToolCall, ...]:
    if calls is None:
        return ()
    if not isinstance(calls, (list, tuple)):
        raise ValueError(f"tool_calls must be a list, got {type(calls).__name__}")
    made = []
    for index, call in enumerate(calls):
        if not (isinstance(call, Mapping) and isinstance(call.get("id"), str)
                and isinstance(call.get("name"), str)):
            raise ValueError(f"tool_calls[{index}] must be an object with a string id and name, "
                             'such as {"id": "call_1", "name": "lookup", "arguments": "{}"}')
        made.append(ToolCall(call["id"], call["name"], str(call.get("arguments", "{}"))))
    return tuple(made)


def _parts_from(parts: object) -> tuple[ContentPart, ...]:
    if parts is None:
        return ()
    if not isinstance(parts, (list, tuple)):
        raise ValueError(f"parts must be a list, got {type(parts).__name__}")
    return tuple(_part_from_dict(part, index) for index, part in enumerate(parts))


def _part_to_dict(part: ContentPart) -> dict[str, Any]:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart(url=url, media_type=media_type):
            return {"type": "image", "url": url, "media_type": media_type}


def _part_from_dict(part: object, index: int) -> ContentPart:
    if not isinstance(part, Mapping):
        raise ValueError(f"parts[{index}] must be an object, got {type(part).__name__}")
    if part.get("type") == "image":
        if not isinstance(part.get("url"), str):
            raise ValueError(f'parts[{index}]: an image part needs "url", a string')
        return ImagePart(part["url"], part.get("media_type"))
    return TextPart(str(part.get("text", "")))
