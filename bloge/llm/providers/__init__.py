"""Real LLM providers over HTTP: the shared shell (``http_client``), its retries (``retry``)
and the SSE decoder (``sse``)."""

from bloge.llm.providers.retry import RetryPolicy, retry_after_seconds

__all__ = ["RetryPolicy", "retry_after_seconds"]
