"""``Guard``: the ASGI middleware in front of every endpoint — Host and Origin checks (against
DNS rebinding), CORS, API keys, the body limit, and paths holding a control character (a 400
naming it, before any route takes an id from the path).

A browser page on another site can make a browser send requests to a server on loopback; a
rebound DNS name makes them look same-origin. So the ``Host`` header must name this server,
an ``Origin`` (sent by browsers, never by other clients) must be this server (the host and
port the ``Host`` header names) or an allowed origin, and with API keys every request but the
public ones needs its key.

The guard also says who made the request (:func:`bloge.server.principals.principal_of`): the
one place a principal is derived, so that every check (the autopilot's four eyes, who owns a
run or a thread) sees the same one. A request with two ``Authorization`` (or ``X-Api-Key``)
headers is refused: one reader could take the first and another the last.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from bloge.core.context import Principal
from bloge.rpc.errors import code_of_status
from bloge.server.config import ServerConfig
from bloge.server.inputs import BadRequestError, printable_id
from bloge.server.principals import SCOPE_KEY, key_principal
from bloge.server.problems import error_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: What anyone may fetch without a key: the health probe, and the chat page (static; every
#: request it makes carries the key its user enters).
PUBLIC = frozenset({("GET", "/healthz"), ("GET", "/"), ("HEAD", "/")})
_CORS_METHODS = "GET, POST, DELETE, OPTIONS"
#: Where the services of bloge.rpc are answered: their refusals have the RPC wire's body.
_RPC_PREFIX = "/rpc/"
_CORS_HEADERS = ("Authorization, Content-Type, Last-Event-ID, Mcp-Protocol-Version, "
                 "Mcp-Session-Id, A2A-Version, A2A-Extensions")
#: Headers a credential may travel in: each may come once.
_CREDENTIAL_HEADERS = (b"authorization", b"x-api-key")

Answer = tuple[int, bytes, list[tuple[bytes, bytes]]]
"""What the guard answers itself: a status, a body and headers."""


class BodyTooLargeError(Exception):
    """The request's body is larger than the server takes."""


class Guard:
    """Wraps ``app``; see the module docs."""

    def __init__(self, app: App, config: ServerConfig) -> None:
        self.app = app
        self.config = config
        self._hosts = config.hosts()
        self._origins = frozenset(o.rstrip("/") for o in config.cors_origins)
        self._keys = tuple((key.encode(), key in config.admin_keys)
                           for key in (*config.api_keys, *config.admin_keys))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Judged by a function of its own: what it reads (the headers, decoded) is not kept
        # while the request is served, which for a stream may be hours.
        answer, origin = self._admit(scope)
        if answer is not None:
            await _respond(send, *answer)
            return
        exchange = _Exchange(receive, send, limit=self.config.max_body_bytes, origin=origin)
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except BodyTooLargeError:
            if not exchange.started:
                await _respond(send, *_refusal(
                    413, f"the request body is larger than {self.config.max_body_bytes} bytes",
                    rpc=scope["path"].startswith(_RPC_PREFIX)))

    def _admit(self, scope: Scope) -> tuple[Answer | None, str | None]:
        """The guard's own answer to the request (a refusal, a CORS preflight's 204), or
        ``None`` to let it through; and the allowed origin whose CORS headers its response
        gets. Puts the request's principal in ``scope``."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in scope["headers"]}
        rpc = scope["path"].startswith(_RPC_PREFIX)
        repeated = _repeated_credential(scope["headers"])
        if repeated is not None:
            return _refusal(400, f"the request has more than one {repeated} header; send one "
                            "credential", rpc=rpc), None
        host = _host_name(headers.get("host", ""))
        if host not in self._hosts:
            return _refusal(400, f"Host {host!r} is not served here; add it to "
                            "bloge.server.allowed-hosts", rpc=rpc), None
        origin = headers.get("origin")
        cors = origin is not None and origin.rstrip("/") in self._origins
        foreign = origin is not None and not _same_origin(origin, headers.get("host", ""))
        if foreign and not cors:
            return _refusal(403, f"Origin {origin!r} may not call this server; add it to "
                            "bloge.server.cors-origins", rpc=rpc), None
        method = scope["method"]
        if cors and method == "OPTIONS":
            return (204, b"", _cors_headers(origin or "", preflight=True)), None
        principal = self._principal(headers) if self._keys else None
        if self._keys and (method, scope["path"]) not in PUBLIC and principal is None:
            return _refusal(401, "a valid API key is needed: send Authorization: Bearer <key>",
                            extra=[(b"www-authenticate", b"Bearer")], rpc=rpc), None
        scope[SCOPE_KEY] = principal
        declared = headers.get("content-length")
        limit = self.config.max_body_bytes
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return _refusal(413, f"the request body is larger than {limit} bytes",
                            rpc=rpc), None
        allowed = origin if cors else None
        try:  # before any route takes an id from it
            printable_id(scope["path"], "path")
        except BadRequestError as unprintable:  # an answer to an allowed page, which reads it
            cors_headers = None if allowed is None else _cors_headers(allowed, preflight=False)
            return _refusal(400, unprintable.message, cors_headers, param="path", rpc=rpc), None
        return None, allowed

    def _principal(self, headers: dict[str, str]) -> Principal | None:
        """The principal of the request's valid key; ``None`` without one."""
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        given = token.strip().encode()
        # Every key is compared, in constant time each: the answer takes as long either way.
        matches = [(hmac.compare_digest(given, key), admin) for key, admin in self._keys]
        if not any(matched for matched, _ in matches):
            return None
        admin = any(matched and admin for matched, admin in matches)
        return Principal(key_principal(token.strip()), admin=admin)


def _repeated_credential(raw: list[tuple[bytes, bytes]]) -> str | None:
    """The name of a credential header the request carries more than once, if any."""
    names = [name.lower() for name, _ in raw]
    return next((name.decode().title() for name in _CREDENTIAL_HEADERS
                 if names.count(name) > 1), None)


class _Exchange:
    """The request's ``receive`` and ``send`` as the app behind the guard sees them: the body
    counted against ``limit`` (:class:`BodyTooLargeError` past it), the CORS headers of an
    allowed ``origin`` added to the response; ``started`` once the response began."""

    __slots__ = ("_body_read", "_limit", "_origin", "_receive", "_received", "_send", "started")

    def __init__(self, receive: Receive, send: Send, *, limit: int,
                 origin: str | None) -> None:
        self._receive = receive
        self._send = send
        self._limit = limit
        self._origin = origin
        self._received = 0
        self._body_read = False
        self.started = False

    def receive(self) -> Awaitable[Message]:
        if self._body_read:
            # Nothing left to count: the server's own wait, without a frame of ours (a stream
            # waits so for its client's disconnect as long as it is open).
            return self._receive()
        return self._counted()

    async def _counted(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            if self._received > self._limit:
                raise BodyTooLargeError
            self._body_read = not message.get("more_body", False)
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            if self._origin is not None:
                message["headers"] = [*message.get("headers", ()),
                                      *_cors_headers(self._origin, preflight=False)]
        await self._send(message)


def _host_name(netloc: str) -> str:
    """The host of ``host[:port]`` or ``[v6]:port``, lower case, without brackets."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) is the server the request's ``Host``
    names: the same host and port (a missing port is the scheme's). A page of another port
    on the same host is another site (another local app, a dev server)."""
    page = urlsplit(origin)
    default = {"http": 80, "https": 443}.get(page.scheme)
    served = urlsplit(f"//{host.strip()}")
    try:
        return (page.hostname is not None and page.hostname == served.hostname
                and (page.port or default) == (served.port or default))
    except ValueError:  # a port that is no number
        return False


def _cors_headers(origin: str, *, preflight: bool) -> list[tuple[bytes, bytes]]:
    headers = [(b"access-control-allow-origin", origin.encode("latin-1")),
               (b"vary", b"Origin")]
    if preflight:
        headers += [(b"access-control-allow-methods", _CORS_METHODS.encode()),
                    (b"access-control-allow-headers", _CORS_HEADERS.encode()),
                    (b"access-control-max-age", b"600")]
    return headers


def _refusal(status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None, *,
             param: str | None = None, rpc: bool = False) -> Answer:
    """A refusal of the request: the OpenAI-style error body, or for an RPC call the RPC
    wire's ``{"code", "message", "details"}`` (413 is ``resource_exhausted``)."""
    shaped = ({"code": code_of_status(status), "message": message, "details": {}} if rpc
              else error_body(message, status=status, param=param))
    return status, json.dumps(shaped).encode(), [(b"content-type", b"application/json"),
                                                 *(extra or [])]


async def _respond(send: Send, status: int, body: bytes,
                   headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
