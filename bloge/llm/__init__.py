"""The LLM provider SPI: neutral messages, requests, responses, stream chunks, providers,
the chat operators the agent loop calls, token estimation, and test providers."""

from typing import TYPE_CHECKING, Any

from bloge.llm.messages import ContentPart, ImagePart, LlmMessage, Role, TextPart, ToolCall
from bloge.llm.operators import (
    LLM_CHAT,
    LLM_STREAMING_CHAT,
    LlmChatOperator,
    LlmStreamingChatOperator,
)
from bloge.llm.provider import LlmProvider
from bloge.llm.testing import FunctionProvider, ScriptedProvider, tool_call_response
from bloge.llm.tokens import HeuristicTokenEstimator, TokenEstimator
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse, ToolDefinition

if TYPE_CHECKING:
    from bloge.llm.providers import (
        AnthropicProvider,
        ClaudeProvider,
        OpenAIChatProvider,
        RetryPolicy,
    )

# The HTTP providers pull in httpx and tenacity; they load on first use so that importing
# bloge (a CLI's --help, a test of the DSL) does not pay for them.
_PROVIDERS = frozenset({"AnthropicProvider", "ClaudeProvider", "OpenAIChatProvider", "RetryPolicy"})


def __getattr__(name: str) -> Any:
    if name in _PROVIDERS:
        from bloge.llm import providers  # noqa: PLC0415 -- httpx loads on first use

        return getattr(providers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LLM_CHAT",
    "LLM_STREAMING_CHAT",
    "AnthropicProvider",
    "ClaudeProvider",
    "ContentPart",
    "FunctionProvider",
    "HeuristicTokenEstimator",
    "ImagePart",
    "LlmChatOperator",
    "LlmChunk",
    "LlmMessage",
    "LlmProvider",
    "LlmRequest",
    "LlmResponse",
    "LlmStreamingChatOperator",
    "OpenAIChatProvider",
    "RetryPolicy",
    "Role",
    "ScriptedProvider",
    "TextPart",
    "TokenEstimator",
    "ToolCall",
    "ToolDefinition",
    "tool_call_response",
]
