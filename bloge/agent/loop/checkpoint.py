"""``AgentCheckpoint``: a snapshot to resume a run from, with a JSON form."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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
        """JSON text with a schema tag; never raises. Tool results go through ``codec``'s
        :meth:`~bloge.core.codec.JsonCodec.encode_lenient`: a result with no JSON form is
        written as an ``{"$unserializable": …}`` marker, and reads back as that marker."""
        return codec.encode_lenient({
            "schema": SCHEMA,
            "agent_id": self.agent_id,
            "turn_count": self.turn_count,
            "conversation": [message.to_dict() for message in self.conversation],
            "tool_results": dict(self.tool_results),
            "usage": self.usage.to_dict(),
        })

    @classmethod
    def from_json(cls, text: str | bytes) -> AgentCheckpoint:
        """Read :meth:`to_json`'s form; ``BlogeUsageError`` naming the problem otherwise.

        Besides the shape, a checkpoint must make sense: counts are non-negative integers,
        and every tool call in the conversation is answered by a tool message right after
        it (and every tool message answers such a call) — what providers insist on.
        """
        try:
            data = json.loads(text)
        except RecursionError:
            raise BlogeUsageError("checkpoint is nested too deeply to be a checkpoint") from None
        except ValueError as exc:
            raise BlogeUsageError(f"checkpoint is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            kind = {list: "a list", str: "a string", bool: "a boolean"}.get(
                type(data), "null" if data is None else "a number")
            raise BlogeUsageError(f"not a bloge agent checkpoint: the JSON is {kind}, not an "
                                  f'object with "schema": {SCHEMA!r}')
        if data.get("schema") != SCHEMA:
            raise BlogeUsageError(f"not a bloge agent checkpoint (schema "
                                  f"{data.get('schema')!r}, expected {SCHEMA!r})")
        try:
            return cls._read(data)
        except KeyError as exc:
            raise BlogeUsageError(f"checkpoint is malformed: it has no {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise BlogeUsageError(f"checkpoint is malformed: {exc}") from exc

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> AgentCheckpoint:
        messages = data["conversation"]
        if not isinstance(messages, list):
            raise TypeError(f"'conversation' must be a list, got {_kind(messages)}")
        conversation = tuple(_message(item, index) for index, item in enumerate(messages))
        check_tool_pairs(conversation)
        results = _or_empty(data.get("tool_results"))
        if not isinstance(results, dict):
            raise TypeError(f"'tool_results' must be an object, got {_kind(results)}")
        agent_id = data.get("agent_id")
        if agent_id is not None and not isinstance(agent_id, str):
            raise TypeError(f"'agent_id' must be a string or null, got {_kind(agent_id)}")
        usage = _or_empty(data.get("usage"))
        if not isinstance(usage, dict):
            raise TypeError(f"'usage' must be an object, got {_kind(usage)}")
        return cls(
            conversation=conversation,
            turn_count=_count(data["turn_count"], "turn_count"),
            tool_results=results,
            agent_id=agent_id,
            usage=AgentUsage(*(_count(usage.get(name, 0), f"usage.{name}")
                               for name in ("llm_calls", "prompt_tokens", "completion_tokens",
                                            "unreported_calls", "cache_read_tokens",
                                            "cache_write_tokens"))),
        )


def check_tool_pairs(conversation: Sequence[LlmMessage]) -> None:
    """``ValueError`` unless every assistant tool call is answered by exactly one tool message
    in the run of tool messages right after it, and every tool message answers such a call."""
    unanswered: dict[str, int] = {}
    for index, message in enumerate(conversation):
        if message.role == "tool":
            if unanswered.pop(message.tool_call_id or "", None) is None:
                raise ValueError(f"conversation[{index}] answers tool call "
                                 f"{message.tool_call_id!r}, which the assistant message "
                                 "before it did not make")
            continue
        _fail_on_unanswered(unanswered, conversation)
        unanswered = {call.id: index for call in message.tool_calls}
    _fail_on_unanswered(unanswered, conversation)


def _fail_on_unanswered(unanswered: Mapping[str, int], conversation: Sequence[LlmMessage]) -> None:
    if not unanswered:
        return
    call_id, index = next(iter(unanswered.items()))
    name = next(c.name for c in conversation[index].tool_calls if c.id == call_id)
    raise ValueError(f"conversation[{index}] calls tool {name!r} (call {call_id!r}) but no "
                     "tool message answers it")


def _message(item: object, index: int) -> LlmMessage:
    if not isinstance(item, Mapping):
        raise TypeError(f"conversation[{index}] must be an object, got {_kind(item)}")
    try:
        return LlmMessage.from_dict(item)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"conversation[{index}]: {exc}") from exc


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name!r} must be a non-negative integer, got {value!r}")
    return value


def _or_empty(value: object) -> object:
    return {} if value is None else value


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
