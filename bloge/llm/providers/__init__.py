"""Real LLM providers over HTTP: OpenAI Chat Completions.

Each provider is a pure wire translation (``openai``) plus a thin HTTP shell
(``http_client``) with tenacity retries (``retry``); streams are decoded by ``sse``.
"""

from bloge.llm.providers.openai_provider import OpenAIChatProvider
from bloge.llm.providers.retry import RetryPolicy, retry_after_seconds

__all__ = ["OpenAIChatProvider", "RetryPolicy", "retry_after_seconds"]
