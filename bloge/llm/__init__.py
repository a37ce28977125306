"""The LLM provider SPI: neutral messages, requests, responses, stream chunks, providers,
the chat operators the agent loop calls, token estimation, and test providers."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.llm.messages import ContentPart, ImagePart, LlmMessage, Role, TextPart, ToolCall
    from bloge.llm.operators import (
        LLM_CHAT,
        LLM_STREAMING_CHAT,
        LlmChatOperator,
        LlmStreamingChatOperator,
    )
    from bloge.llm.provider import LlmProvider
    from bloge.llm.providers import (
        AnthropicProvider,
        ClaudeProvider,
        OpenAIChatProvider,
        RetryPolicy,
    )
    from bloge.llm.testing import FunctionProvider, ScriptedProvider, tool_call_response
    from bloge.llm.tokens import HeuristicTokenEstimator, TokenEstimator
    from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse, ToolDefinition
else:
    # The HTTP providers pull in httpx and tenacity: like every name here, they load on first use,
    # so that importing bloge (a CLI's --help, a test of the DSL) does not pay for them.
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.llm.messages": [
            "ContentPart", "ImagePart", "LlmMessage", "Role", "TextPart", "ToolCall",
        ],
        "bloge.llm.operators": [
            "LLM_CHAT", "LLM_STREAMING_CHAT", "LlmChatOperator", "LlmStreamingChatOperator",
        ],
        "bloge.llm.provider": ["LlmProvider"],
        "bloge.llm.providers": [
            "AnthropicProvider", "ClaudeProvider", "OpenAIChatProvider", "RetryPolicy",
        ],
        "bloge.llm.testing": ["FunctionProvider", "ScriptedProvider", "tool_call_response"],
        "bloge.llm.tokens": ["HeuristicTokenEstimator", "TokenEstimator"],
        "bloge.llm.types": ["LlmChunk", "LlmRequest", "LlmResponse", "ToolDefinition"],
    })


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
