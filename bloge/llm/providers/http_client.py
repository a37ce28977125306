"""The thin HTTP shell every provider shares: JSON POSTs and SSE streams, with retries.

Everything httpx raises is translated here, at the boundary, into :class:`AttemptError`
(retried or not by :func:`call_with_retries`) and finally into :class:`ProviderError`.

``timeout`` bounds each wait of an attempt, as httpx's own timeouts do: for a connection of the
pool, to connect, to send, for each read. A JSON answer is bounded as a whole too (httpx's
timeouts bound each read only, which a server that trickles a byte at a time never trips). A
stream is not: waiting for its first byte is one more read, like waiting for each next line,
which is bounded too (a server may send bytes without ever ending a line); until its first
byte, the call's ``total_timeout`` (:class:`RetryPolicy`) bounds it as a whole. So a server
whose event loop is behind (thousands of streams on one worker) relays its streams late
rather than failing them, as long as each step happens within ``timeout``.

A call made while a pool-wait tally is open (:mod:`bloge.llm.pool_wait`) adds to it how long
it waited for a connection of the pool: from sending until httpx, through its ``trace``
extension, says it started connecting or writing the request on a connection.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Self, TypeVar

import httpx

from bloge.core.errors import BlogeUsageError, ProviderError
from bloge.core.masking import mask_url_credentials
from bloge.core.tracecontext import with_trace_headers
from bloge.llm.pool_wait import PoolWait, current_pool_wait
from bloge.llm.providers.loop_clients import LoopClients
from bloge.llm.providers.response_body import StreamWatch, quoted, read_body, utf8_text
from bloge.llm.providers.retry import (
    AttemptError,
    RetryPolicy,
    Sleep,
    call_with_retries,
    retry_after_seconds,
)
from bloge.llm.providers.server_errors import (
    message_of,
    redact,
    request_excerpt,
    server_error_message,
    truncate,
)
from bloge.llm.providers.sse import SseDecoder, SseEvent
from bloge.llm.providers.wire import compact_json

Timeout = float | httpx.Timeout
T = TypeVar("T")

# Transport failures worth another attempt; the rest of httpx.TransportError (an unsupported
# URL scheme, a proxy refusal, a malformed request of ours) would fail the same way again.
_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)

# httpcore's trace events that mean a request has its connection: a new one starts connecting,
# or a free one starts carrying the request.
_CONNECTED = frozenset({
    "connection.connect_tcp.started",
    "connection.connect_unix_socket.started",
    "http11.send_request_headers.started",
    "http2.send_request_headers.started",
})


class ProviderHttpClient:
    """POSTs JSON to one API as one provider, retrying as ``retry`` says.

    ``headers`` (which carry the API key) go with every request, so an injected
    ``http_client`` works unchanged; it stays open on :meth:`aclose`, since its owner closes it.
    Without one, the provider keeps one client per event loop (see
    :mod:`~bloge.llm.providers.loop_clients`); an injected client belongs to the loop it first
    connected in, and using it from another loop fails with a :class:`ProviderError` saying so.
    ``secrets`` are removed from every message we raise or log. ``timeout`` bounds each
    attempt as the module says (a JSON answer as a whole by an ``httpx.Timeout``'s largest
    value, no bound when it has a ``None``); a body longer than ``max_response_bytes`` fails
    the call. ``limits`` size the connection pool of the provider's own clients (httpx's
    default: 100 connections, 20 kept alive); a call beyond ``max_connections`` waits for a
    free one (see the module).
    """

    __slots__ = (
        "_attempt_timeout",
        "_base_url",
        "_clients",
        "_headers",
        "_max_bytes",
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
        max_response_bytes: int,
        http_client: httpx.AsyncClient | None,
        retry: RetryPolicy,
        sleep: Sleep,
        limits: httpx.Limits | None = None,
    ) -> None:
        if max_response_bytes < 1:
            raise BlogeUsageError(f"max_response_bytes must be >= 1, got {max_response_bytes}")
        if limits is not None and http_client is not None:
            raise BlogeUsageError("limits size the provider's own connection pool; an injected "
                                  "http_client has its own: pass limits to it instead")
        self._provider = provider
        self._base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self._secrets = secrets
        self._timeout = timeout
        self._attempt_timeout = _whole(timeout)
        self._max_bytes = max_response_bytes
        # An injected client is the one client; else one of our own per event loop.
        self._clients = http_client if http_client is not None else LoopClients(
            httpx.AsyncClient if limits is None else functools.partial(httpx.AsyncClient,
                                                                       limits=limits))
        self._retry = retry
        self._sleep = sleep

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def retry(self) -> RetryPolicy:
        """How calls are retried; a new policy applies from the next call on."""
        return self._retry

    @retry.setter
    def retry(self, policy: RetryPolicy) -> None:
        self._retry = policy

    @property
    def base_url(self) -> str:
        """The base URL as shown in reprs and messages: credentials in it masked."""
        return mask_url_credentials(self._base_url)

    async def post_json(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` and return the JSON object the server answered."""

        async def attempt() -> dict[str, Any]:
            client = await self._client()
            request = client.build_request(
                "POST", self._base_url + path, json=body,
                headers=with_trace_headers(self._headers),
                timeout=self._timeout, extensions=_pool_clock(),
            )
            try:
                async with asyncio.timeout(self._attempt_timeout):
                    response = await client.send(request, stream=True)
                    try:
                        raw = await read_body(response, limit=self._max_bytes)
                    finally:
                        await response.aclose()
            except TimeoutError as exc:
                raise self._timed_out("without a complete response") from exc
            except httpx.HTTPError as exc:
                raise self._transport_failure(exc) from self._shown(exc)
            except RuntimeError as exc:
                raise self._unusable_client(exc) from exc
            if response.is_error:
                raise self._status_failure(response, raw, body)
            text = utf8_text(raw)
            try:
                parsed = json.loads(text)
            except ValueError as exc:
                raise self._unreadable(text) from exc
            if not isinstance(parsed, dict):
                raise self._unreadable(text)
            return parsed

        return await self._with_retries(attempt)

    async def stream_events(self, path: str, content: bytes) -> AsyncGenerator[SseEvent, None]:
        """POST ``content`` (a JSON body, see :func:`json_content`) to ``path`` and yield the
        server-sent events of the answer.

        The request is retried only until the first byte of the body arrives; a failure after
        that raises :class:`ProviderError` at once, since part of the answer was already
        delivered. Closing this iterator closes the response.
        """
        response, chunks, first = await self._with_retries(
            lambda: self._open_stream(path, content))
        decoder = SseDecoder()
        watch = StreamWatch(idle=self._attempt_timeout, limit=self._max_bytes)
        chunk = first
        try:
            try:
                while True:
                    for event in decoder.feed(watch.text(chunk)):
                        yield event
                    try:
                        if watch.stalling:
                            chunk = await watch.read_in_time(chunks)
                        else:
                            chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                events = decoder.feed(watch.end()) + decoder.close()
            except httpx.HTTPError as exc:
                error = self.error(f"the stream broke off: {_describe(exc)}")
                raise error from self._shown(exc)
            except AttemptError as exc:
                raise self.error(exc.message, retryable=exc.retryable) from exc
            for event in events:
                yield event
        finally:
            await response.aclose()

    def error(
        self, message: str, *, status_code: int | None = None, retryable: bool = False,
        request: Mapping[str, Any] | bytes | None = None,
    ) -> ProviderError:
        """A :class:`ProviderError` of this provider, with the secrets taken out; ``request``
        is the body the server did not answer, kept as the error's ``request``."""
        return ProviderError(
            redact(message, self._secrets),
            provider=self._provider,
            status_code=status_code,
            retryable=retryable,
            request=None if request is None else request_excerpt(request, self._secrets),
        )

    async def aclose(self) -> None:
        """Close the connection pools, unless the ``http_client`` was injected."""
        if isinstance(self._clients, LoopClients):
            await self._clients.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self._provider!r}, base_url={self.base_url!r})"

    async def _open_stream(
        self, path: str, content: bytes
    ) -> tuple[httpx.Response, AsyncIterator[bytes], bytes]:
        headers = with_trace_headers({"Content-Type": "application/json", **self._headers,
                                      "Accept": "text/event-stream"})
        client = await self._client()
        request = client.build_request(
            "POST", self._base_url + path, content=content, headers=headers,
            timeout=self._timeout, extensions=_pool_clock(),
        )
        try:
            response = await client.send(request, stream=True)
            try:
                chunks, first = await self._first_bytes(response, content)
            except BaseException:
                await response.aclose()
                raise
        except httpx.HTTPError as exc:
            raise self._transport_failure(exc) from self._shown(exc)
        except RuntimeError as exc:
            raise self._unusable_client(exc) from exc
        return response, chunks, first

    async def _first_bytes(
        self, response: httpx.Response, content: bytes
    ) -> tuple[AsyncIterator[bytes], bytes]:
        if response.is_error:
            raw = await read_body(response, limit=self._max_bytes)
            raise self._status_failure(response, raw, content)
        if response.headers.get("content-type", "").startswith("application/json"):
            # A server that answers a streaming request with plain JSON is reporting an error
            # in a 200 (some proxies and OpenAI-compatible servers do).
            raw = await read_body(response, limit=self._max_bytes)
            raise self._failure(_json_instead_of_stream(quoted(raw)), retryable=False)
        chunks = response.aiter_bytes()
        return chunks, await anext(chunks, b"")

    async def _client(self) -> httpx.AsyncClient:
        if isinstance(self._clients, LoopClients):
            return await self._clients.current()
        return self._clients

    def _with_retries(self, attempt: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        # The retries' own coroutine, not one around it: a stream holds it until its first byte.
        return call_with_retries(
            attempt, policy=self._retry, sleep=self._sleep, provider=self._provider
        )

    def _failure(
        self,
        message: str,
        *,
        retryable: bool,
        status_code: int | None = None,
        retry_after: float | None = None,
        request: Mapping[str, Any] | bytes | None = None,
    ) -> AttemptError:
        return AttemptError(
            redact(message, self._secrets),
            status_code=status_code,
            retryable=retryable,
            retry_after=retry_after,
            request=None if request is None else request_excerpt(request, self._secrets),
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

    def _status_failure(
        self, response: httpx.Response, body: bytes, request: Mapping[str, Any] | bytes
    ) -> AttemptError:
        status = response.status_code
        message = server_error_message(quoted(body))
        if status == 404:
            # A wrong base URL (a missing /v1, a typo in the host's path) answers 404: the URL
            # asked is what a user needs to see to mend it.
            message = f"{message}; asked {response.request.method} {response.request.url}"
        return self._failure(
            message,
            status_code=status,
            retryable=status in self._retry.retry_on_status,
            retry_after=retry_after_seconds(response.headers, now=time.time()),
            request=request,
        )

    def _unreadable(self, text: str) -> AttemptError:
        message = f"the response is not a JSON object: {truncate(text)}"
        return self._failure(message, retryable=False)

    def _timed_out(self, without: str) -> AttemptError:
        message = f"{self._base_url}: timed out after {self._attempt_timeout:g} s {without}"
        return self._failure(message, retryable=True)


def json_content(body: Mapping[str, Any]) -> bytes:
    """``body`` as a streamed request's content (compact JSON, non-ASCII kept, as httpx
    0.28's ``json=`` sends it), encoded once for all its attempts: a stream keeps these bytes,
    which httpx's request keeps anyway, rather than the mapping and its parts."""
    return compact_json(body, allow_nan=False).encode()


def _pool_clock() -> dict[str, Any]:
    """The request extensions that time this request's wait for a connection, when a tally is
    open (else none: httpx then traces nothing)."""
    tally = current_pool_wait()
    return {} if tally is None else {"trace": _PoolClock(tally)}


class _PoolClock:
    """httpx ``trace`` callback: adds the time until the request has its connection."""

    __slots__ = ("_sent", "_tally")

    def __init__(self, tally: PoolWait) -> None:
        self._tally: PoolWait | None = tally
        self._sent = time.perf_counter()

    async def __call__(self, event: str, info: Mapping[str, Any]) -> None:
        if self._tally is not None and event in _CONNECTED:
            self._tally.seconds += time.perf_counter() - self._sent
            self._tally = None


def _whole(timeout: Timeout) -> float | None:
    """The bound of a whole attempt: ``timeout`` itself, or an ``httpx.Timeout``'s largest
    value (so that no httpx limit is cut short), ``None`` when one of them is unbounded."""
    if not isinstance(timeout, httpx.Timeout):
        return timeout
    limits = [timeout.connect, timeout.read, timeout.write, timeout.pool]
    bounded = [limit for limit in limits if limit is not None]
    return max(bounded) if len(bounded) == len(limits) else None


def _describe(exc: httpx.HTTPError) -> str:
    detail = str(exc)
    kind = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({kind}{': ' + detail if detail else ''})"
    return f"{kind}: {detail}" if detail else kind


class HttpProvider:
    """What every HTTP provider does with its :class:`ProviderHttpClient`: close it, also as
    an async context manager (``async with OpenAIChatProvider(...) as provider:``), and
    change how it retries."""

    __slots__ = ("_http",)

    _http: ProviderHttpClient

    async def aclose(self) -> None:
        """Release the connection pool (an injected ``http_client`` stays open)."""
        await self._http.aclose()

    def route(self, model: str) -> str:
        """Where a call of ``model`` goes: the provider, its host (and port, when the URL
        names one), the model (a circuit breaker's key, see :mod:`bloge.llm.breaker`)."""
        where = httpx.URL(self._http.base_url).netloc.decode("ascii")
        return f"{self._http.provider}@{where}:{model}"

    @property
    def retry(self) -> RetryPolicy:
        """How calls are retried; set a new policy to change it from the next call on."""
        return self._http.retry

    @retry.setter
    def retry(self, policy: RetryPolicy) -> None:
        self._http.retry = policy

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _json_instead_of_stream(body: str) -> str:
    """Why a streaming request answered with JSON failed: the error the body reports, or —
    a body without one, such as a whole completion — that the server did not stream."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, Mapping) and message_of(parsed):
        return server_error_message(body)
    return ("the server answered a streaming request with JSON, not an event stream (does it "
            f'support "stream": true?): {server_error_message(body)}')
