"""``AgentCheckpoint``: a snapshot to resume a run from, with a JSON form."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bloge.agent.loop.records import AgentUsage
from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage

SCHEMA = "bloge.agent.checkpoint/1"


@dataclass(frozen=True, slots=True)
class AgentCheckpoint:
    """The memory's view of the conversation (summaries included), the turn count, and the
    last tool results — enough for ``resume`` to continue exactly where the run stopped."""

    conversation: tuple[LlmMessage, ...]
    turn_count: int
    tool_results: Mapping[str, Any]
    agent_id: str | None = None
    usage: AgentUsage = field(default_factory=AgentUsage)

    def to_json(self, codec: JsonCodec = DEFAULT_CODEC) -> str:
        """JSON text with a schema tag; tool results go through ``codec``."""
        return codec.encode({
            "schema": SCHEMA,
            "agent_id": self.agent_id,
            "turn_count": self.turn_count,
            "conversation": [message.to_dict() for message in self.conversation],
            "tool_results": dict(self.tool_results),
            "usage": self.usage.to_dict(),
        })

    @classmethod
    def from_json(cls, text: str | bytes) -> AgentCheckpoint:
        """Read :meth:`to_json`'s form; ``BlogeUsageError`` naming the problem otherwise."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BlogeUsageError(f"checkpoint is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise BlogeUsageError(f"not a bloge agent checkpoint (schema {found!r}, "
                                  f"expected {SCHEMA!r})")
        try:
            usage = data.get("usage") or {}
            return cls(
                conversation=tuple(LlmMessage.from_dict(m) for m in data["conversation"]),
                turn_count=int(data["turn_count"]),
                tool_results=dict(data.get("tool_results") or {}),
                agent_id=data.get("agent_id"),
                usage=AgentUsage(int(usage.get("llm_calls", 0)),
                                 int(usage.get("prompt_tokens", 0)),
                                 int(usage.get("completion_tokens", 0))),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BlogeUsageError(f"checkpoint is malformed: {exc!r}") from exc
