"""The LLM provider SPI: neutral messages, requests, responses, stream chunks, providers,
the chat operators the agent loop calls, token estimation, and test providers."""

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

__all__ = [
    "LLM_CHAT",
    "LLM_STREAMING_CHAT",
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
    "Role",
    "ScriptedProvider",
    "TextPart",
    "TokenEstimator",
    "ToolCall",
    "ToolDefinition",
    "tool_call_response",
]
