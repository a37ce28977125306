"""``AnthropicProvider``: the Messages API over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import httpx

from bloge.core.errors import BlogeUsageError
from bloge.llm.providers.anthropic import messages_request_for, parse_messages_response
from bloge.llm.providers.anthropic_cache import with_breakpoints
from bloge.llm.providers.anthropic_stream import AnthropicStreamAssembler
from bloge.llm.providers.chunk_stream import assembled_stream
from bloge.llm.providers.http_client import (
    HttpProvider,
    ProviderHttpClient,
    Timeout,
    json_content,
)
from bloge.llm.providers.response_body import DEFAULT_MAX_RESPONSE_BYTES
from bloge.llm.providers.retry import DEFAULT_RETRY, RetryPolicy, Sleep
from bloge.llm.providers.wire import WireFormatError
from bloge.llm.structured import (
    OUTPUT_MODES,
    OutputMode,
    answered,
    answered_stream,
    prepared,
    resolved_mode,
)
from bloge.llm.types import LlmChunk, LlmRequest, LlmResponse

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_VERSION = "2023-06-01"
_PATH = "/v1/messages"


class AnthropicProvider(HttpProvider):
    """An :class:`~bloge.llm.LlmProvider` for ``POST {base_url}/v1/messages``.

    ``api_key`` goes in ``x-api-key`` and never appears in errors, logs or reprs; ``version``
    in ``anthropic-version``. ``max_tokens`` applies when a request sets none (the API
    requires one). ``headers`` are added to every request and win over ours (``anthropic-beta``
    for instance). ``timeout``, ``max_response_bytes``, ``http_client``, ``retry``, ``sleep`` and
    ``limits`` work as for :class:`~bloge.llm.providers.openai_provider.OpenAIChatProvider`.
    A typed request (``LlmRequest.output``) is asked for with a forced final-answer tool
    (``output_mode`` ``auto``, ``native`` or ``tool``) or in a system prompt (``prompted``).
    With ``prompt_caching`` (the default) every request of :meth:`chat` and
    :meth:`stream_chat` carries ``cache_control`` breakpoints on its stable prefix (see
    :mod:`~bloge.llm.providers.anthropic_cache`); the cache's reads and writes come back in
    the response's usage.

    The provider is also a :data:`~bloge.llm.providers.claude.ClaudeTransport`: awaiting
    ``provider(body)`` sends a prepared request body and returns the response JSON.
    """

    __slots__ = ("_max_tokens", "_output_mode", "_prompt_caching")

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str,
        version: str = DEFAULT_VERSION,
        max_tokens: int = 1024,
        timeout: Timeout = 60.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Sleep = asyncio.sleep,
        limits: httpx.Limits | None = None,
        output_mode: OutputMode = "auto",
        prompt_caching: bool = True,
    ) -> None:
        if output_mode not in OUTPUT_MODES:
            raise BlogeUsageError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}, "
                                  f"got {output_mode!r}")
        self._output_mode: OutputMode = output_mode
        self._max_tokens = max_tokens
        self._prompt_caching = prompt_caching
        self._http = ProviderHttpClient(
            provider="anthropic",
            base_url=base_url,
            headers={"x-api-key": api_key, "anthropic-version": version, **(headers or {})},
            secrets=(api_key,),
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            http_client=http_client,
            retry=retry,
            sleep=sleep,
            limits=limits,
        )

    async def chat(self, request: LlmRequest) -> LlmResponse:
        """One message: text and/or tool calls, finish reason and usage. A request with an
        ``output`` asks for it with a forced final-answer tool, or in a system prompt when
        ``output_mode`` says ``prompted`` (see :mod:`bloge.llm.structured`)."""
        mode = self._mode(request)
        body = self._body(prepared(request, mode))
        return answered(self.parse(await self.send_messages(body), model=request.model), mode)

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        """Text chunks as they arrive, each tool call when its block ends, then ``done``."""
        mode = self._mode(request)
        chunks = self.stream_messages(self._body(prepared(request, mode)))
        return chunks if mode != "tool" or request.output is None else answered_stream(chunks)

    def _mode(self, request: LlmRequest) -> OutputMode:
        # The Messages API has no response_format: its native structured output is the
        # forced tool.
        mode = resolved_mode(request, self._output_mode, "tool")
        return "tool" if mode == "native" else mode

    async def send_messages(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST a prepared body (see :func:`build_messages_request`); the response JSON."""
        return await self._http.post_json(_PATH, body)

    __call__ = send_messages

    def stream_messages(self, body: Mapping[str, Any]) -> AsyncGenerator[LlmChunk, None]:
        """Stream a prepared body; the chunks of :meth:`stream_chat`."""
        streamed = {**body, "stream": True}
        model = body.get("model")
        assembler = AnthropicStreamAssembler(model=model if isinstance(model, str) else "")
        return assembled_stream(self._http, _PATH, json_content(streamed), assembler)

    def parse(self, body: Mapping[str, Any], *, model: str = "") -> LlmResponse:
        """The neutral answer in a response body, answered by ``model`` (else the model the
        body names); :class:`ProviderError` when malformed."""
        try:
            return parse_messages_response(body, model=model)
        except WireFormatError as exc:
            raise self._http.error(str(exc)) from exc

    def _body(self, request: LlmRequest) -> dict[str, Any]:
        body = messages_request_for(request, model=request.model, max_tokens=self._max_tokens)
        return with_breakpoints(body) if self._prompt_caching else body

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._http.base_url!r})"

