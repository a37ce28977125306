"""``AgentHandler``: an agent as a raw ASGI application — text in, text out.

The runtime chapter's ``asHandler()``: the input is the request body, falling back to the
``?q=`` query parameter, and the answer is the response body. Any ASGI server runs it
(``uvicorn.run(handler)``), and any ASGI framework can mount it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, TypeAlias
from urllib.parse import parse_qsl

from bloge.core.errors import BlogeUsageError

#: The largest request body :class:`AgentHandler` reads by default: 1 MiB.
DEFAULT_MAX_BODY_BYTES = 1 << 20

Answer: TypeAlias = Callable[[str], Awaitable[str]]
Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]

_log = logging.getLogger("bloge.agent")
_METHODS = ("GET", "POST")
_NO_INPUT = "no input: send it as the request body (UTF-8 text), or as the query parameter ?q="


class _RefusalError(Exception):
    """A request the handler answers with an error status instead of running the agent."""

    def __init__(self, status: int, message: str,
                 headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = tuple(headers)


class AgentHandler:
    """An ASGI application that answers every HTTP request with ``answer(input)``.

    The input is the request body decoded as UTF-8 when it holds more than whitespace, else
    the ``q`` query parameter. ``GET`` and ``POST`` are served, on ``path`` only when it is
    given (a trailing ``/`` is ignored). The answer is ``200`` ``text/plain;
    charset=utf-8``. Refusals are short ``text/plain`` explanations: ``400`` no input, or a
    body or query that is not UTF-8; ``404`` another path; ``405`` another method; ``413`` a
    body over ``max_body_bytes``; ``500`` the agent failed — the error is logged on the
    ``bloge.agent`` logger, and the response names only its type (no traceback, no message
    that could carry a secret). A client that disconnects before the answer cancels the run.
    The ``lifespan`` protocol is answered, so that servers which send it start cleanly.
    """

    __slots__ = ("_answer", "_max_body_bytes", "_path")

    def __init__(self, answer: Answer, *, path: str | None = None,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or (
                max_body_bytes < 1):
            raise BlogeUsageError(f"max_body_bytes must be a whole number >= 1, "
                                  f"got {max_body_bytes!r}")
        if path is not None and not path.startswith("/"):
            raise BlogeUsageError(f"path must start with '/', got {path!r}")
        self._answer = answer
        self._path = None if path is None else _normal(path)
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, receive, send)
        else:  # as the ASGI specification asks of a protocol the application does not speak
            raise BlogeUsageError(f"an AgentHandler serves HTTP, not {kind!r}")

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._check_route(scope)
            body = await _body(scope, receive, self._max_body_bytes)
            if body is None:
                return  # the client left
            text = _input(body, scope.get("query_string", b""))
        except _RefusalError as refusal:
            await _respond(send, refusal.status, refusal.message, refusal.headers)
            return
        answer = asyncio.ensure_future(self._answer(text))
        try:
            if not await _answered_before_disconnect(answer, receive):
                return
            reply = answer.result()
        except Exception as error:  # noqa: BLE001 -- any failure of the agent is a 500 told in the log
            _log.error("the agent failed to answer an HTTP request", exc_info=error)
            await _respond(send, 500, f"the agent failed ({type(error).__name__}); "
                                      "the server log has the details")
            return
        finally:
            if not answer.done():
                answer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await answer
        await _respond(send, 200, reply)

    def _check_route(self, scope: Scope) -> None:
        if self._path is not None and _normal(scope["path"]) != self._path:
            raise _RefusalError(404, f"not found: this agent answers at {self._path}")
        if scope["method"] not in _METHODS:
            raise _RefusalError(405, f"method {scope['method']} not allowed: use GET or POST",
                           [(b"allow", b"GET, POST")])


def _normal(path: str) -> str:
    return path.rstrip("/") or "/"


async def _body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` when the client disconnected while sending it."""
    too_large = _RefusalError(413, f"the request body is larger than {limit} bytes")
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            raise too_large
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if len(body) > limit:
            raise too_large
        if not message.get("more_body", False):
            return bytes(body)


def _input(body: bytes, query: bytes) -> str:
    """The agent's input: the body when it holds more than whitespace, else ``?q=``."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _RefusalError(400, "the request body is not valid UTF-8 text") from None
    if text.strip():
        return text
    try:
        fields = parse_qsl(query.decode("utf-8"), errors="strict")
    except UnicodeDecodeError:
        raise _RefusalError(400, "the query string is not valid UTF-8") from None
    question = next((value for key, value in fields if key == "q"), "")
    if not question.strip():
        raise _RefusalError(400, _NO_INPUT)
    return question


async def _answered_before_disconnect(answer: asyncio.Future[str], receive: Receive) -> bool:
    """Wait for ``answer``; ``False`` when the client disconnected first."""
    disconnected = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait((answer, disconnected), return_when=asyncio.FIRST_COMPLETED)
    finally:
        disconnected.cancel()
    return answer.done()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _respond(send: Send, status: int, text: str,
                   headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = text.encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode("ascii")),
        *headers,
    ]})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
