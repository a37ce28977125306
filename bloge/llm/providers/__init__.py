"""Real LLM providers over HTTP: OpenAI Chat Completions and Anthropic Messages.

Each provider is a pure wire translation (``openai``, ``anthropic``) plus a thin HTTP shell
(``http_client``) with tenacity retries (``retry``), which reads bodies within a size, a time
and UTF-8 (``response_body``); streams are decoded by ``sse`` and assembled into chunks by
``chunk_stream``.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.llm.providers.anthropic import build_messages_request
    from bloge.llm.providers.anthropic_provider import AnthropicProvider
    from bloge.llm.providers.claude import ClaudeProvider, ClaudeTransport
    from bloge.llm.providers.openai_provider import OpenAIChatProvider
    from bloge.llm.providers.retry import RetryPolicy, retry_after_seconds
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.llm.providers.anthropic": ["build_messages_request"],
        "bloge.llm.providers.anthropic_provider": ["AnthropicProvider"],
        "bloge.llm.providers.claude": ["ClaudeProvider", "ClaudeTransport"],
        "bloge.llm.providers.openai_provider": ["OpenAIChatProvider"],
        "bloge.llm.providers.retry": ["RetryPolicy", "retry_after_seconds"],
    })

__all__ = [
    "AnthropicProvider",
    "ClaudeProvider",
    "ClaudeTransport",
    "OpenAIChatProvider",
    "RetryPolicy",
    "build_messages_request",
    "retry_after_seconds",
]
