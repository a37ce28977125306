"""Real LLM providers over HTTP: OpenAI Chat Completions and Anthropic Messages.

Each provider is a pure wire translation (``openai``, ``anthropic``) plus a thin HTTP shell
(``http_client``) with tenacity retries (``retry``), which reads bodies within a size, a time
and UTF-8 (``response_body``); streams are decoded by ``sse`` and assembled into chunks by
``chunk_stream``.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.llm.providers.anthropic import build_messages_request as build_messages_request
    from bloge.llm.providers.anthropic_provider import AnthropicProvider as AnthropicProvider
    from bloge.llm.providers.claude import ClaudeProvider as ClaudeProvider
    from bloge.llm.providers.claude import ClaudeTransport as ClaudeTransport
    from bloge.llm.providers.openai_provider import OpenAIChatProvider as OpenAIChatProvider
    from bloge.llm.providers.retry import RetryPolicy as RetryPolicy
    from bloge.llm.providers.retry import retry_after_seconds as retry_after_seconds
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
