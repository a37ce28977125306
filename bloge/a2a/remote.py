"""``A2aAgentTool``: the operator of a tool that asks an A2A agent of another service.

Each call sends the tool's arguments as one message (the one string argument as it is, else
the arguments as JSON) and returns the agent's answer (its task's artifacts, else its
status message) as the call's result. The agent's card is read once, from
``<url>/.well-known/agent-card.json``; the card must name an endpoint on the same origin as
``url``, or the call is refused: the API key goes with every request, and a card must not be
able to send it to another host.

A call is bounded by ``timeout`` seconds, all its attempts together, and each answer (the card
too) by ``max_answer_bytes``: a larger one is refused as it arrives. Only an ``idempotent``
agent's call is tried again — after a failure that may be passing (no connection, a timeout,
HTTP 408, 429, 5xx) — for asking twice may do twice what was asked. Every failure is a
:class:`RemoteAgentError` naming the agent's URL (and the HTTP status, when there is one),
never the key or the headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError

from bloge.a2a.parts import answer_of, message, text_of
from bloge.agent.runtime import question_of
from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeError, BlogeUsageError
from bloge.core.operator import OperatorMetadata
from bloge.core.tracecontext import with_trace_headers

#: Seconds a call may take, all attempts together, unless the tool says otherwise.
DEFAULT_TIMEOUT = 60.0
#: The largest answer (an HTTP body) read from a remote agent, unless the tool says otherwise.
DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024
#: Statuses after which an idempotent call is tried again.
PASSING_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Task states after which the task goes on without the caller (its answer is awaited).
_RUNNING = frozenset({pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING,
                      pb.TASK_STATE_UNSPECIFIED})
#: The longest excerpt of a remote's own error message an error quotes.
_QUOTED = 300
#: One TLS context for every call: making one costs milliseconds.
_TLS = ssl.create_default_context()


class RemoteAgentError(BlogeError):
    """A remote agent did not answer a call: ``url`` is the agent's, ``status`` the HTTP
    status when it answered with one."""

    def __init__(self, message: str, *, url: str, status: int | None = None,
                 passing: bool = False) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.passing = passing


class A2aAgentTool:
    """Asks the A2A agent at ``url`` (see the module docs). ``api_key`` is sent as
    ``Authorization: Bearer``, with ``headers``; ``max_attempts`` and ``backoff`` (seconds,
    doubled each time) bound the tries of an ``idempotent`` call, ``max_answer_bytes`` the
    size of an answer; ``transport`` replaces httpx's (tests)."""

    __slots__ = ("_card", "_headers", "_transport", "backoff", "max_answer_bytes",
                 "max_attempts", "metadata", "timeout", "url")

    def __init__(self, url: str, *, idempotent: bool = False, timeout: float | None = None,
                 api_key: str | None = None, headers: Mapping[str, str] | None = None,
                 max_attempts: int = 3, backoff: float = 0.5,
                 max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if max_attempts < 1:
            raise BlogeUsageError(f"A2A agent {url}: max_attempts must be 1 or more")
        self.url = url.rstrip("/")
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_attempts = max_attempts if idempotent else 1
        self.backoff = backoff
        self.max_answer_bytes = max_answer_bytes
        self.metadata = OperatorMetadata(prompt_hint=f"Ask the A2A agent at {self.url}",
                                         idempotent=idempotent)
        self._headers = {**(headers or {}),
                         **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
        self._transport = transport
        self._card: pb.AgentCard | None = None

    def __repr__(self) -> str:
        return f"A2aAgentTool({self.url!r})"

    async def execute(self, input: Any, ctx: OperatorContext) -> str:
        """The agent's answer to ``input`` (see the module docs)."""
        text = question_of(input)
        try:
            async with asyncio.timeout(self.timeout):
                return await self._attempts(text)
        except TimeoutError:
            raise RemoteAgentError(f"the A2A agent at {self.url} did not answer within "
                                   f"{self.timeout:g} s", url=self.url) from None

    async def _attempts(self, text: str) -> str:
        wait = self.backoff
        for attempt in range(1, self.max_attempts + 1):
            try:
                return await self._ask(text)
            except RemoteAgentError as error:
                if not error.passing or attempt == self.max_attempts:
                    raise
            await asyncio.sleep(wait)
            wait *= 2
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _ask(self, text: str) -> str:
        transport = _Capped(self._transport or httpx.AsyncHTTPTransport(verify=_TLS),
                            self.max_answer_bytes, self.url)
        async with httpx.AsyncClient(headers=with_trace_headers(self._headers),
                                     timeout=self.timeout, transport=transport) as http:
            with _translated(self.url):
                card = self._card or await self._resolve(http)
                config = ClientConfig(httpx_client=http, streaming=False)
                try:
                    client = ClientFactory(config).create(card)
                except ValueError:  # the card names no transport the SDK speaks
                    self._card = None
                    raise RemoteAgentError(f"the agent card of {self.url} names no JSON-RPC "
                                           "endpoint", url=self.url) from None
                request = pb.SendMessageRequest(message=message(text))
                answers = [answer async for answer in client.send_message(request)]
                if not answers:
                    raise RemoteAgentError(f"the A2A agent at {self.url} answered nothing",
                                           url=self.url)
                if answers[-1].HasField("message"):
                    return text_of(answers[-1].message.parts)
                task = answers[-1].task
                while task.status.state in _RUNNING:  # a server that answers before it ends
                    await asyncio.sleep(self.backoff)
                    task = await client.get_task(pb.GetTaskRequest(id=task.id))
                return self._answer(task)

    async def _resolve(self, http: httpx.AsyncClient) -> pb.AgentCard:
        """The agent's card, kept for the next calls; only its endpoints on ``url``'s
        origin."""
        card = await A2ACardResolver(http, self.url).get_agent_card()
        origin = _origin(self.url)
        kept = [interface for interface in card.supported_interfaces
                if _origin(interface.url) == origin]
        if not kept:
            named = ", ".join(interface.url for interface in card.supported_interfaces)
            raise RemoteAgentError(f"the agent card of {self.url} names no endpoint on "
                                   f"{origin} (it names {named or 'none'}); bloge sends its "
                                   "key to the card's own origin only", url=self.url)
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(kept)
        self._card = card
        return card

    def _answer(self, task: pb.Task) -> str:
        state = task.status.state
        if state == pb.TASK_STATE_COMPLETED:
            return answer_of(task)
        said = _excerpt(text_of(task.status.message.parts))
        name = pb.TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")
        raise RemoteAgentError(f"the A2A agent at {self.url} ended task {task.id} {name}"
                               + (f": {said}" if said else ""), url=self.url)


@contextlib.contextmanager
def _translated(url: str) -> Iterator[None]:
    """The SDK's and httpx's failures, and answers that are not A2A's, as
    :class:`RemoteAgentError` naming ``url``."""
    try:
        yield
    except ValueError as error:  # the SDK's checks of an answer, a body that does not decode
        why = _excerpt(str(error)) or type(error).__name__
        raise RemoteAgentError(f"the A2A agent at {url} answered something that is not an "
                               f"A2A answer: {why}", url=url) from error
    except (A2AError, httpx.HTTPError) as error:
        status, passing = _cause(error)
        if status is not None:
            raise RemoteAgentError(f"the A2A agent at {url} answered HTTP {status}", url=url,
                                   status=status, passing=passing) from error
        why = _excerpt(str(error)) or type(error).__name__
        raise RemoteAgentError(f"the A2A agent at {url} failed: {why}", url=url,
                               passing=passing) from error


def _cause(error: BaseException) -> tuple[int | None, bool]:
    """The HTTP status behind ``error`` (``None``: none), and whether it may pass."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, httpx.HTTPStatusError):
            status = seen.response.status_code
            return status, status in PASSING_STATUSES
        if isinstance(seen, httpx.TransportError):  # no connection, a timeout
            return None, True
        seen = seen.__cause__
    return None, False


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _QUOTED else text[:_QUOTED] + "…"


class _Capped(httpx.AsyncBaseTransport):
    """``inner``, its response bodies cut at ``cap`` bytes: past it, a
    :class:`RemoteAgentError` naming ``url`` ends the read."""

    def __init__(self, inner: httpx.AsyncBaseTransport, cap: int, url: str) -> None:
        self._inner = inner
        self._cap = cap
        self._url = url

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        response.stream = _CappedBody(response.stream, self._cap, self._url)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedBody(httpx.AsyncByteStream):
    def __init__(self, body: httpx.AsyncByteStream | httpx.SyncByteStream, cap: int,
                 url: str) -> None:
        assert isinstance(body, httpx.AsyncByteStream)
        self._body = body
        self._cap = cap
        self._url = url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._body:
            read += len(chunk)
            if read > self._cap:
                raise RemoteAgentError(f"the A2A agent at {self._url} answered more than "
                                       f"{self._cap} bytes (max_answer_bytes)", url=self._url)
            yield chunk

    async def aclose(self) -> None:
        await self._body.aclose()
