"""The receiving side of every transport: one call dispatched to a handler.

A transport that receives a call hands it to :func:`dispatch`, which runs the handler (sync
handlers on a worker thread) under the call's deadline, with :func:`current_call` telling the
handler who called and how long it has, and turns every failure into a :class:`RemoteError`
that is safe to send back: a handler's own ``RemoteError`` as it is, a ``ValueError`` as
``invalid_argument`` with its message, anything else as ``internal`` naming only the service,
the method and the exception's type (the traceback goes to the ``bloge.rpc`` logger).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bloge.core.errors import BlogeUsageError
from bloge.core.workers import DEFAULT_WORKERS
from bloge.rpc.errors import RemoteError

Handler = Callable[[str, str], "str | Awaitable[str]"]
"""``handler(method, payload) -> payload``, JSON text both ways, sync or async."""

Metadata = Mapping[str, str]
"""Call metadata (auth, tracing, the idempotency key): lower-case names, text values."""

IDEMPOTENCY_KEY = "idempotency-key"
#: The header (HTTP) or NATS header carrying the time left, in milliseconds.
TIMEOUT_HEADER = "bloge-timeout-ms"
#: A service's or method's name: what a NATS subject, a URL path segment and the settings'
#: ``bloge.rpc.services`` keys all take.
SERVICE_NAME = re.compile(r"[A-Za-z0-9_\-]+")
#: Names a metadata entry may have: what an HTTP header or a NATS header can carry.
_NAME = re.compile(r"[a-z0-9][a-z0-9\-_.]*")
_RESERVED = frozenset({"host", "content-type", "content-length", "connection", "authorization",
                       "transfer-encoding", "accept", "accept-encoding", "user-agent",
                       TIMEOUT_HEADER})

log = logging.getLogger("bloge.rpc")


@dataclass(frozen=True, slots=True)
class CallInfo:
    """The call a handler is serving: read it with :func:`current_call`.

    ``deadline`` is on the ``time.monotonic()`` clock (``None``: no deadline). A proxy called
    while serving a call gives the calls it makes no more than the time that is left.
    """

    service: str
    method: str
    metadata: Metadata = field(default_factory=dict)
    deadline: float | None = None

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


_CURRENT: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "bloge_rpc_call", default=None)


class SharedReplies(Protocol):
    """Where the replicas of a service share the replies of keyed calls (the NATS
    responder's JetStream bucket): ``once`` runs ``run`` only when no replica claimed
    ``key`` before, and otherwise returns (or raises) what the claiming run gave."""

    async def once(self, call: CallInfo, key: str, fingerprint: str, *, where: str,
                   idempotent: bool, run: Callable[[], Awaitable[str]]) -> str:
        ...


_REPLIES: contextvars.ContextVar[SharedReplies | None] = contextvars.ContextVar(
    "bloge_rpc_replies", default=None)


def shared_replies() -> SharedReplies | None:
    """The replies the call being served shares with other replicas (``None``: the handler
    de-duplicates keyed calls in its own process)."""
    return _REPLIES.get()


def current_call() -> CallInfo | None:
    """The call being served on this task, or ``None`` outside a handler."""
    return _CURRENT.get()


def check_metadata(metadata: Metadata | None) -> dict[str, str]:
    """``metadata`` as a dict, every name lower case and sendable as a header."""
    if not metadata:
        return {}
    checked: dict[str, str] = {}
    for name, value in metadata.items():
        key = name.lower()
        if not _NAME.fullmatch(key) or key in _RESERVED:
            raise RemoteError("invalid_argument", f"metadata name {name!r} cannot be sent: "
                              "use lower-case letters, digits and - _ . and no header name "
                              "the transport sets itself")
        if not isinstance(value, str) or "\n" in value or "\r" in value:
            raise RemoteError("invalid_argument", f"metadata {name!r} must be one line of text")
        checked[key] = value
    return checked


def timeout_of(deadline: float | None) -> float | None:
    """The seconds a call may take: its own ``deadline`` (seconds), capped by the time left
    of the call being served, if any."""
    served = current_call()
    left = served.time_left() if served is not None else None
    if left is None:
        return deadline
    return left if deadline is None else min(deadline, left)


#: Time a reply may take past the deadline: the server's own deadline answer arrives first.
DEADLINE_GRACE = 1.0
#: The longest time left a call carries (ten digits of milliseconds, about 115 days): what
#: a server reads from ``TIMEOUT_HEADER``; a longer deadline is sent as this one.
MAX_TIMEOUT_MS = 9_999_999_999


def checked_deadline(deadline: object, where: str) -> float | None:
    """``deadline`` as seconds, or ``None``; a :class:`BlogeUsageError` naming ``where``
    unless it is a number of seconds more than 0 (``inf``: as long as a call can carry)."""
    if deadline is None:
        return None
    if (isinstance(deadline, bool) or not isinstance(deadline, int | float)
            or math.isnan(deadline) or deadline <= 0):
        raise BlogeUsageError(f"{where}: deadline must be a number of seconds more than 0 "
                              f"(or None), got {deadline!r}")
    return float(deadline)


def reply_wait(service: str, method: str, deadline: float | None, headers: dict[str, str],
               default: float) -> float:
    """How long a network transport waits for the reply to a call with ``deadline``: its
    budget (:func:`timeout_of`, sent along in ``headers`` as ``TIMEOUT_HEADER``) plus
    :data:`DEADLINE_GRACE`, else ``default``; ``deadline_exceeded`` when it has passed."""
    budget = timeout_of(deadline)
    if budget is None:
        return default
    if budget <= 0:
        raise RemoteError("deadline_exceeded", f"{service}.{method}: the deadline passed "
                          "before the call was sent")
    budget = min(budget, MAX_TIMEOUT_MS / 1000)
    headers[TIMEOUT_HEADER] = str(max(1, round(budget * 1000)))
    return budget + DEADLINE_GRACE


async def dispatch(handler: Handler, service: str, method: str, payload: str, *,
                   time_left: float | None = None, metadata: Metadata | None = None,
                   replies: SharedReplies | None = None) -> str:
    """Run ``handler`` for one received call, stopped when ``time_left`` seconds have
    passed; raise only :class:`RemoteError`. ``replies``: where keyed calls are
    de-duplicated across replicas (default: in this process)."""
    timeout = time_left
    if timeout is not None and timeout <= 0:
        raise RemoteError("deadline_exceeded", f"{service}.{method}: the deadline had "
                          "passed when the call arrived")
    deadline = None if timeout is None else time.monotonic() + timeout
    token = _CURRENT.set(CallInfo(service, method, dict(metadata or {}), deadline))
    shared = _REPLIES.set(replies)
    try:
        if timeout is None:
            return await _run(handler, method, payload)
        async with asyncio.timeout(timeout):
            return await _run(handler, method, payload)
    except TimeoutError:
        raise RemoteError("deadline_exceeded",
                          f"{service}.{method}: the deadline passed ({timeout:.3g}s)") from None
    except RemoteError:
        raise
    except Exception as exc:
        raise as_remote_error(exc, f"{service}.{method}") from exc
    finally:
        _REPLIES.reset(shared)
        _CURRENT.reset(token)


def as_remote_error(exc: Exception, where: str) -> RemoteError:
    """What the caller is told of a handler's failure (see the module docs)."""
    if isinstance(exc, RemoteError):
        return exc
    if isinstance(exc, ValueError):
        return RemoteError("invalid_argument", f"{where}: {exc}")
    log.error("rpc %s failed", where, exc_info=exc)
    return RemoteError("internal", f"{where} failed ({type(exc).__name__}); the service's "
                       "log has the details")


def is_async(handler: Handler) -> bool:
    """Whether ``handler`` is awaited (a coroutine function, or an async ``__call__``)."""
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None))  # noqa: B004 -- an async __call__ is awaited, not run on a thread


async def _run(handler: Handler, method: str, payload: str) -> str:
    if getattr(handler, "is_async", False) is True or is_async(handler):
        reply = await handler(method, payload)  # type: ignore[misc]  # checked async above
    else:
        reply = await DEFAULT_WORKERS.run(handler, method, payload)
        if inspect.isawaitable(reply):
            reply = await reply
    if not isinstance(reply, str):
        raise TypeError(f"an RPC handler must return JSON text, got {type(reply).__name__}")
    return reply
