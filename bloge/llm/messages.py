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
    def from_dict(cls, data: Mapping[str, Any]) -> LlmMessage:
        """Rebuild a message from :meth:`to_dict`'s form; ``ValueError`` when malformed."""
        role = data.get("role")
        if role not in ROLES:
            raise ValueError(f"message role must be one of {ROLES}, got {role!r}")
        content = data.get("content") or ""
        if not isinstance(content, str):
            raise ValueError(f"message content must be a string, got {type(content).__name__}")
        calls = tuple(
            ToolCall(str(c["id"]), str(c["name"]), str(c.get("arguments", "{}")))
            for c in data.get("tool_calls") or ()
        )
        parts = tuple(_part_from_dict(p) for p in data.get("parts") or ())
        call_id = data.get("tool_call_id")
        return cls(
            role,
            content,
            parts=parts,
            tool_calls=calls,
            tool_call_id=None if call_id is None else str(call_id),
            is_error=bool(data.get("is_error", False)),
        )


def _part_to_dict(part: ContentPart) -> dict[str, Any]:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart(url=url, media_type=media_type):
            return {"type": "image", "url": url, "media_type": media_type}


def _part_from_dict(data: Mapping[str, Any]) -> ContentPart:
    if data.get("type") == "image":
        return ImagePart(str(data["url"]), data.get("media_type"))
    return TextPart(str(data.get("text", "")))
