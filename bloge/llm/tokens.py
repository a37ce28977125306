"""``TokenEstimator``: how many tokens a message costs, for ``token_budget`` memory."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bloge.llm.messages import LlmMessage


@runtime_checkable
class TokenEstimator(Protocol):
    def estimate(self, message: LlmMessage) -> int:
        """The tokens ``message`` adds to a prompt (content, tool calls and overhead)."""
        ...


class HeuristicTokenEstimator:
    """About four characters per token plus a fixed overhead per message.

    Good to within tens of percent for English text on GPT- and Claude-family tokenizers;
    plug in a real tokenizer through :class:`TokenEstimator` when budgets are tight.
    """

    __slots__ = ("chars_per_token", "message_overhead")

    def __init__(self, *, chars_per_token: float = 4.0, message_overhead: int = 4) -> None:
        self.chars_per_token = chars_per_token
        self.message_overhead = message_overhead

    def estimate(self, message: LlmMessage) -> int:
        chars = len(message.content)
        for call in message.tool_calls:
            chars += len(call.name) + len(call.arguments) + len(call.id)
        return self.message_overhead + int(-(-chars // self.chars_per_token))

    def estimate_all(self, messages: list[LlmMessage] | tuple[LlmMessage, ...]) -> int:
        return sum(self.estimate(m) for m in messages)


DEFAULT_TOKEN_ESTIMATOR = HeuristicTokenEstimator()
