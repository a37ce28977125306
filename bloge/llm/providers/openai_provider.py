"""``OpenAIChatProvider``: Chat Completions over HTTP (OpenAI and compatible servers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

import httpx

from bloge.core.errors import BlogeUsageError, ProviderError
from bloge.llm.providers.chunk_stream import assembled_stream
from bloge.llm.providers.http_client import (
    HttpProvider,
    ProviderHttpClient,
    Timeout,
    json_content,
)
from bloge.llm.providers.openai import chat_request_body, parse_chat_response
from bloge.llm.providers.openai_stream import OpenAIStreamAssembler
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

_PATH = "/chat/completions"

#: What a server's refusal of structured output names (OpenAI-compatible servers vary).
_NATIVE_WORDS = ("response_format", "json_schema", "response format", "structured output")


class OpenAIChatProvider(HttpProvider):
    """An :class:`~bloge.llm.LlmProvider` for ``POST {base_url}/chat/completions``.

    Works with OpenAI (``base_url="https://api.openai.com/v1"``) and with compatible servers
    such as Ollama or vLLM. ``api_key`` is sent as ``Authorization: Bearer`` (left out when
    empty, for local servers that need none) and never appears in errors, logs or reprs.
    ``headers`` are added to every request and win over ours. ``max_tokens`` bounds every
    answer whose request sets no ``max_tokens`` of its own (``None``: the server's limit,
    often the whole context). ``timeout`` (seconds or an
    ``httpx.Timeout``) applies to every request, also with an injected ``http_client``, which
    :meth:`aclose` leaves open: it bounds each wait (for a pooled connection, to connect, to
    send, for each read: a stream's first byte and each next line) and a whole JSON answer; a
    stream is bounded as a whole until its first byte by ``retry``'s ``total_timeout``.
    A response longer than ``max_response_bytes`` (a JSON body, or a whole stream) fails.
    Failures are retried as ``retry`` says, waiting with ``sleep``; what still fails raises
    :class:`~bloge.core.errors.ProviderError`. ``limits`` (``httpx.Limits``) size the
    provider's connection pool: at most ``max_connections`` calls are on the wire at once, the
    others wait for a connection (httpx's default: 100); not with an ``http_client``.
    ``output_mode`` says how a typed request (``LlmRequest.output``) is asked for: ``auto``
    (``response_format: json_schema``, or the final-answer tool once the server refused it),
    ``native``, ``tool`` or ``prompted`` (see :mod:`bloge.llm.structured`).
    With ``prompt_cache_key`` (the default) a request's ``cache_key`` (the run's thread) is sent
    as OpenAI's ``prompt_cache_key``, which routes a conversation's calls to the same prompt
    cache; turn it off for a compatible server that rejects unknown fields. The cache's reads
    come back in the response's usage (``cache_read_tokens``).
    """

    __slots__ = ("_max_tokens", "_native_refused", "_output_mode", "_prompt_cache_key")

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        organization: str | None = None,
        max_tokens: int | None = None,
        timeout: Timeout = 60.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Sleep = asyncio.sleep,
        limits: httpx.Limits | None = None,
        output_mode: OutputMode = "auto",
        prompt_cache_key: bool = True,
    ) -> None:
        if output_mode not in OUTPUT_MODES:
            raise BlogeUsageError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}, "
                                  f"got {output_mode!r}")
        self._output_mode: OutputMode = output_mode
        self._native_refused = False
        self._prompt_cache_key = prompt_cache_key
        if max_tokens is not None and max_tokens < 1:
            raise BlogeUsageError(f"max_tokens must be >= 1, got {max_tokens}")
        self._max_tokens = max_tokens
        wire_headers: dict[str, str] = {}
        if api_key:
            wire_headers["Authorization"] = f"Bearer {api_key}"
        if organization:
            wire_headers["OpenAI-Organization"] = organization
        wire_headers.update(headers or {})
        self._http = ProviderHttpClient(
            provider="openai",
            base_url=base_url,
            headers=wire_headers,
            secrets=(api_key,),
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            http_client=http_client,
            retry=retry,
            sleep=sleep,
            limits=limits,
        )

    async def chat(self, request: LlmRequest) -> LlmResponse:
        """One completion: text and/or tool calls, finish reason and usage. A request with an
        ``output`` asks for it with ``response_format: json_schema`` unless ``output_mode``
        says ``tool`` or ``prompted`` (see :mod:`bloge.llm.structured`); in ``auto`` mode, a
        server that refuses the ``response_format`` (400 or 422 naming it) is asked with the
        final-answer tool instead, from then on."""
        mode = self._mode(request)
        try:
            return await self._chat(request, mode)
        except ProviderError as exc:
            if not self._refused_native(request, mode, exc):
                raise
            return await self._chat(request, "tool")

    async def _chat(self, request: LlmRequest, mode: OutputMode) -> LlmResponse:
        body = await self._http.post_json(_PATH, self._body(prepared(request, mode),
                                                            stream=False))
        try:
            return answered(parse_chat_response(body, model=request.model), mode)
        except WireFormatError as exc:
            raise self._http.error(str(exc)) from exc

    def stream_chat(self, request: LlmRequest) -> AsyncGenerator[LlmChunk, None]:
        """Text chunks as they arrive, then one chunk per complete tool call, then a ``done``
        chunk with the finish reason and usage (requested with ``include_usage``). Typed
        requests as for :meth:`chat`, the fall-back included (before any chunk)."""
        mode = self._mode(request)
        if request.output is None or mode != "native":
            return self._stream(request, mode)
        return self._stream_or_fall_back(request)

    async def _stream_or_fall_back(self, request: LlmRequest) -> AsyncGenerator[LlmChunk, None]:
        chunks = self._stream(request, "native")
        async with aclosing(chunks):
            try:
                first = await anext(chunks)
            except ProviderError as exc:
                if not self._refused_native(request, "native", exc):
                    raise
                chunks = self._stream(request, "tool")
                first = await anext(chunks)
            yield first
            async for chunk in chunks:
                yield chunk

    def _stream(self, request: LlmRequest, mode: OutputMode) -> AsyncGenerator[LlmChunk, None]:
        body = self._body(prepared(request, mode), stream=True)
        chunks = assembled_stream(self._http, _PATH, json_content(body),
                                  OpenAIStreamAssembler(model=request.model))
        return chunks if mode != "tool" or request.output is None else answered_stream(chunks)

    def _mode(self, request: LlmRequest) -> OutputMode:
        strongest: OutputMode = "tool" if self._native_refused else "native"
        return resolved_mode(request, self._output_mode, strongest)

    def _refused_native(self, request: LlmRequest, mode: OutputMode,
                        error: ProviderError) -> bool:
        """Whether ``error`` is the server refusing ``response_format`` in ``auto`` mode; if
        so, this provider asks with the final-answer tool from now on."""
        chosen = request.output.mode if request.output is not None else "auto"
        refused = (mode == "native" and self._output_mode == "auto" and chosen == "auto"
                   and error.status_code in (400, 422)
                   and any(word in str(error).lower() for word in _NATIVE_WORDS))
        if refused:
            self._native_refused = True
        return refused

    def _body(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        return chat_request_body(request, stream=stream, max_tokens=self._max_tokens,
                                 prompt_cache_key=self._prompt_cache_key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._http.base_url!r})"

