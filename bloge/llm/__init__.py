"""The LLM provider SPI: neutral messages, requests, responses, stream chunks, providers."""

from bloge.llm.messages import ContentPart, ImagePart, LlmMessage, Role, TextPart, ToolCall
from bloge.llm.provider import LlmProvider
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse, ToolDefinition

__all__ = [
    "ContentPart",
    "ImagePart",
    "LlmChunk",
    "LlmMessage",
    "LlmProvider",
    "LlmRequest",
    "LlmResponse",
    "Role",
    "TextPart",
    "ToolCall",
    "ToolDefinition",
]
