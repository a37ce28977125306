"""What goes into an agent run and what comes out: ``AgentInput``, ``AgentOutput``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bloge.core.codec import DEFAULT_CODEC
from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage

if TYPE_CHECKING:
    from bloge.agent.loop.checkpoint import AgentCheckpoint


@dataclass(frozen=True, slots=True)
class AgentInput:
    """The messages that start (or continue) a run."""

    messages: tuple[LlmMessage, ...]

    @classmethod
    def of(cls, value: object) -> AgentInput:
        """Coerce a string, a message, a message dict, ``{"messages": [...]}``, or a list of
        those into an ``AgentInput``. Strings become user messages."""
        if isinstance(value, AgentInput):
            return value
        if isinstance(value, str):  # the usual input, before the costlier check for a mapping
            return cls((LlmMessage.user(value),))
        if isinstance(value, Mapping) and "messages" in value:
            return cls.of(list(value["messages"]))
        if isinstance(value, (list, tuple)):
            # A list of messages already (a long history, say) is taken as it is: one pass
            # in C that checks the types, instead of a conversion per item.
            if list(map(type, value)).count(LlmMessage) == len(value):
                messages = tuple(value)
            else:
                messages = tuple(_message(item, index) for index, item in enumerate(value))
        else:
            messages = (_message(value, None),)
        if not messages:
            raise BlogeUsageError("an agent input needs at least one message")
        return cls(messages)


def _message(value: object, index: int | None) -> LlmMessage:
    where = "" if index is None else f" (item {index})"
    match value:
        case LlmMessage():
            return value
        case str():
            return LlmMessage.user(value)
        case Mapping():
            try:
                return LlmMessage.from_dict(value)
            except (KeyError, TypeError, ValueError) as exc:
                raise BlogeUsageError(f"invalid message{where}: {exc}") from exc
    raise BlogeUsageError(
        f"cannot use a {type(value).__name__}{where} as agent input; pass a string, an "
        'LlmMessage, a message dict such as {"role": "user", "content": "…"}, '
        '{"messages": [...]}, or a list of those'
    )


@dataclass(frozen=True, slots=True)
class AgentUsage:
    """Model calls and tokens of a run (summary calls of ``summary(n)`` memory included).

    ``unreported_calls`` counts the model calls whose provider reported no usage (a server
    that streams without a usage chunk): their tokens are missing from the counts, which are
    then a lower bound. Of the ``prompt_tokens``, ``cache_read_tokens`` were read from the
    providers' prompt caches and ``cache_write_tokens`` written to them.
    """

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported_calls: int = 0
    tool_calls: int = 0
    """Tool calls dispatched (a call a budget refused is not one)."""
    cost_usd: float = 0.0
    """The model calls' price in US dollars, as the price table has it (0 for a model
    without a price)."""
    cache_read_tokens: int = 0
    """Prompt tokens the provider read from its prompt cache."""
    cache_write_tokens: int = 0
    """Prompt tokens the provider wrote to its prompt cache."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """The counts as JSON; ``unreported_calls``, ``tool_calls`` and ``cost_usd`` only
        when not 0, the cache's counts only when a cache was used."""
        counts: dict[str, Any] = {"llm_calls": self.llm_calls,
                                  "prompt_tokens": self.prompt_tokens,
                                  "completion_tokens": self.completion_tokens}
        if self.unreported_calls:
            counts["unreported_calls"] = self.unreported_calls
        if self.tool_calls:
            counts["tool_calls"] = self.tool_calls
        if self.cost_usd:
            counts["cost_usd"] = round(self.cost_usd, 9)
        if self.cache_read_tokens or self.cache_write_tokens:
            counts["cache_read_tokens"] = self.cache_read_tokens
            counts["cache_write_tokens"] = self.cache_write_tokens
        return counts

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentUsage:
        """The usage of ``to_dict``'s document; a count it leaves out is 0."""
        counts = {name: int(data.get(name, 0)) for name in USAGE_COUNTS}
        return cls(**counts, cost_usd=float(data.get("cost_usd", 0.0)))


#: The whole-number counts of :class:`AgentUsage`.
USAGE_COUNTS = ("llm_calls", "prompt_tokens", "completion_tokens", "unreported_calls",
                "tool_calls", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True, slots=True)
class AgentOutput:
    """The result of a run. The appendix's fields, then our additions.

    ``finish_reason`` is the latest provider reason (``"stop"``, ``"length"``, ``"tool_calls"``
    …), unchanged; ``exit_reason`` says why the loop ended (``"stop"`` or
    ``"exit_condition"``). ``messages`` is the whole transcript, never pruned;
    ``tool_results`` holds the last tool batch's successful results by tool-call id.
    ``run_id`` and ``thread_id`` name a recorded run (an operator with a ``store``) and its
    thread; both are ``None`` otherwise.
    """

    content: str
    finish_reason: str
    turns_used: int
    messages: tuple[LlmMessage, ...]
    tool_results: Mapping[str, Any]
    checkpoint: AgentCheckpoint
    exit_reason: str = "stop"
    usage: AgentUsage = field(default_factory=AgentUsage)
    run_id: str | None = None
    thread_id: str | None = None
    output: Any = None
    """The validated answer of an agent with an output schema: an instance of its registered
    type, else the JSON value (``None``: no schema, or the run ended by its exit condition)."""
    output_data: Any = None
    """``output`` as JSON data (what ``to_dict`` and the run store hold)."""

    def to_dict(self, *, messages: bool = True, checkpoint: bool = True) -> dict[str, Any]:
        """JSON-ready data: the answer, reasons, usage (with ``total_tokens``) and tool results
        (a result with no JSON form in its text form, see ``JsonCodec.encode_lenient``), then
        the transcript and the checkpoint unless left out."""
        document: dict[str, Any] = {
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "content": self.content,
            "finish_reason": self.finish_reason,
            "exit_reason": self.exit_reason,
            "turns_used": self.turns_used,
            "usage": {**self.usage.to_dict(), "total_tokens": self.usage.total_tokens},
            "tool_results": DEFAULT_CODEC.decode(
                DEFAULT_CODEC.encode_lenient(dict(self.tool_results))),
        }
        if self.output_data is not None:
            document["output"] = self.output_data
        if messages:
            document["messages"] = [message.to_dict() for message in self.messages]
        if checkpoint:
            document["checkpoint"] = DEFAULT_CODEC.decode(self.checkpoint.to_json())
        return document
