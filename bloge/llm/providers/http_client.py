"""The thin HTTP shell every provider shares: JSON POSTs and SSE streams, with retries.

Everything httpx raises is translated here, at the boundary, into :class:`AttemptError`
(retried or not by :func:`call_with_retries`) and finally into :class:`ProviderError`.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import Any, Protocol, Self, TypeVar

import httpx

from bloge.core.errors import ProviderError
from bloge.llm.providers.loop_clients import LoopClients
from bloge.llm.providers.retry import (
    AttemptError,
    RetryPolicy,
    Sleep,
    call_with_retries,
    retry_after_seconds,
)
from bloge.llm.providers.server_errors import redact, server_error_message, truncate
from bloge.llm.providers.sse import SseDecoder, SseEvent
from bloge.llm.providers.wire import ServerStreamError, WireFormatError
from bloge.llm.types import LlmChunk

Timeout = float | httpx.Timeout
T = TypeVar("T")

# Transport failures worth another attempt; the rest of httpx.TransportError (an unsupported
# URL scheme, a proxy refusal, a malformed request of ours) would fail the same way again.
_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class ProviderHttpClient:
    """POSTs JSON to one API as one provider, retrying as ``retry`` says.

    ``headers`` (which carry the API key) go with every request, so an injected
    ``http_client`` works unchanged; it stays open on :meth:`aclose`, since its owner closes it.
    Without one, the provider keeps one client per event loop (see
    :mod:`~bloge.llm.providers.loop_clients`); an injected client belongs to the loop it first
    connected in, and using it from another loop fails with a :class:`ProviderError` saying so.
    ``secrets`` are removed from every message we raise or log.
    """

    __slots__ = (
        "_base_url",
        "_clients",
        "_headers",
        "_provider",
        "_retry",
        "_secrets",
        "_sleep",
        "_timeout",
    )

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: Mapping[str, str],
        secrets: tuple[str, ...],
        timeout: Timeout,
        http_client: httpx.AsyncClient | None,
        retry: RetryPolicy,
        sleep: Sleep,
    ) -> None:
        self._provider = provider
        self._base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self._secrets = secrets
        self._timeout = timeout
        # An injected client is the one client; else one of our own per event loop.
        self._clients = http_client if http_client is not None else LoopClients(httpx.AsyncClient)
        self._retry = retry
        self._sleep = sleep

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def base_url(self) -> str:
        return self._base_url

    async def post_json(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` and return the JSON object the server answered."""

        async def attempt() -> dict[str, Any]:
            client = await self._client()
            try:
                response = await client.post(
                    self._base_url + path, json=body, headers=self._headers, timeout=self._timeout
                )
            except httpx.HTTPError as exc:
                raise self._transport_failure(exc) from self._shown(exc)
            except RuntimeError as exc:
                raise self._unusable_client(exc) from exc
            if response.is_error:
                raise self._status_failure(response)
            try:
                parsed = response.json()
            except ValueError as exc:
                raise self._unreadable(response.text) from exc
            if not isinstance(parsed, dict):
                raise self._unreadable(response.text)
            return parsed

        return await self._with_retries(attempt)

    async def stream_events(
        self, path: str, body: Mapping[str, Any]
    ) -> AsyncGenerator[SseEvent, None]:
        """POST ``body`` to ``path`` and yield the server-sent events of the answer.

        The request is retried only until the first byte of the body arrives; a failure after
        that raises :class:`ProviderError` at once, since part of the answer was already
        delivered. Closing this iterator closes the response.
        """
        response, chunks, first = await self._with_retries(lambda: self._open_stream(path, body))
        decoder = SseDecoder()
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            for event in decoder.feed(text.decode(first)):
                yield event
            try:
                async for chunk in chunks:
                    for event in decoder.feed(text.decode(chunk)):
                        yield event
            except httpx.HTTPError as exc:
                error = self.error(f"the stream broke off: {_describe(exc)}")
                raise error from self._shown(exc)
            for event in decoder.feed(text.decode(b"", final=True)) + decoder.close():
                yield event
        finally:
            await response.aclose()

    def error(
        self, message: str, *, status_code: int | None = None, retryable: bool = False
    ) -> ProviderError:
        """A :class:`ProviderError` of this provider, with the secrets taken out."""
        return ProviderError(
            redact(message, self._secrets),
            provider=self._provider,
            status_code=status_code,
            retryable=retryable,
        )

    async def aclose(self) -> None:
        """Close the connection pools, unless the ``http_client`` was injected."""
        if isinstance(self._clients, LoopClients):
            await self._clients.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self._provider!r}, base_url={self._base_url!r})"

    async def _open_stream(
        self, path: str, body: Mapping[str, Any]
    ) -> tuple[httpx.Response, AsyncIterator[bytes], bytes]:
        headers = {**self._headers, "Accept": "text/event-stream"}
        client = await self._client()
        request = client.build_request(
            "POST", self._base_url + path, json=body, headers=headers, timeout=self._timeout
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._transport_failure(exc) from self._shown(exc)
        except RuntimeError as exc:
            raise self._unusable_client(exc) from exc
        try:
            if response.is_error:
                await response.aread()
                raise self._status_failure(response)
            if response.headers.get("content-type", "").startswith("application/json"):
                # A server that answers a streaming request with plain JSON is reporting an
                # error in a 200 (some proxies and OpenAI-compatible servers do).
                await response.aread()
                raise self._failure(server_error_message(response.text), retryable=False)
            chunks = response.aiter_bytes()
            first = await anext(chunks, b"")
        except BaseException as exc:
            await response.aclose()
            if isinstance(exc, httpx.HTTPError):
                raise self._transport_failure(exc) from self._shown(exc)
            raise
        return response, chunks, first

    async def _client(self) -> httpx.AsyncClient:
        if isinstance(self._clients, LoopClients):
            return await self._clients.current()
        return self._clients

    async def _with_retries(self, attempt: Callable[[], Awaitable[T]]) -> T:
        return await call_with_retries(
            attempt, policy=self._retry, sleep=self._sleep, provider=self._provider
        )

    def _failure(
        self,
        message: str,
        *,
        retryable: bool,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> AttemptError:
        return AttemptError(
            redact(message, self._secrets),
            status_code=status_code,
            retryable=retryable,
            retry_after=retry_after,
        )

    def _transport_failure(self, exc: httpx.HTTPError) -> AttemptError:
        return self._failure(
            f"{self._base_url}: {_describe(exc)}", retryable=isinstance(exc, _TRANSIENT)
        )

    def _unusable_client(self, exc: RuntimeError) -> AttemptError:
        # httpx raises RuntimeError for a closed client and for connections of another loop.
        hint = ("; an injected http_client belongs to the event loop it first connected in and "
                "stays usable only until it is closed: create it in the loop that uses it, or "
                "pass none and the provider keeps one per event loop"
                if isinstance(self._clients, httpx.AsyncClient) else "")
        return self._failure(f"{self._base_url}: the HTTP client cannot send ({exc}){hint}",
                             retryable=False)

    def _shown(self, exc: httpx.HTTPError) -> httpx.HTTPError | None:
        """The cause to chain our error to: ``exc``, unless its own message holds a secret (a
        proxy URL with credentials, say), which a traceback would print."""
        text = str(exc)
        return exc if redact(text, self._secrets) == text else None

    def _status_failure(self, response: httpx.Response) -> AttemptError:
        status = response.status_code
        return self._failure(
            server_error_message(response.text),
            status_code=status,
            retryable=status in self._retry.retry_on_status,
            retry_after=retry_after_seconds(response.headers, now=time.time()),
        )

    def _unreadable(self, text: str) -> AttemptError:
        message = f"the response is not a JSON object: {truncate(text)}"
        return self._failure(message, retryable=False)


def _describe(exc: httpx.HTTPError) -> str:
    detail = str(exc)
    kind = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({kind}{': ' + detail if detail else ''})"
    return f"{kind}: {detail}" if detail else kind


class StreamAssembler(Protocol):
    """Turns one wire format's stream events into chunks (one per provider)."""

    @property
    def stopped(self) -> bool:
        """Whether the server sent its end-of-stream event."""
        ...

    @property
    def finished(self) -> bool:
        """Whether the answer is complete."""
        ...

    def feed_data(self, data: str) -> list[LlmChunk]:
        """The chunks one event's data completes."""
        ...

    def finish(self) -> list[LlmChunk]:
        """The last chunks: held-back tool calls and the ``done`` chunk."""
        ...


async def assembled_stream(
    http: ProviderHttpClient, path: str, body: Mapping[str, Any], assembler: StreamAssembler
) -> AsyncGenerator[LlmChunk, None]:
    """POST ``body`` as a stream and yield the chunks ``assembler`` makes of its events.

    The HTTP stream is closed however the consumer stops; a stream that ends before the
    answer is complete, a malformed event or an error event raises :class:`ProviderError`.
    """
    events = http.stream_events(path, body)
    async with aclosing(events):
        try:
            async for event in events:
                for chunk in assembler.feed_data(event.data):
                    yield chunk
                if assembler.stopped:
                    break
            if not assembler.finished:
                raise http.error("the stream ended before the answer was complete")
            final = assembler.finish()
        except WireFormatError as exc:
            raise http.error(str(exc)) from exc
        except ServerStreamError as exc:
            raise http.error(exc.message, retryable=exc.retryable) from exc
    for chunk in final:
        yield chunk


class HttpProvider:
    """What every HTTP provider does with its :class:`ProviderHttpClient`: close it, also as
    an async context manager (``async with OpenAIChatProvider(...) as provider:``)."""

    __slots__ = ("_http",)

    _http: ProviderHttpClient

    async def aclose(self) -> None:
        """Release the connection pool (an injected ``http_client`` stays open)."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
