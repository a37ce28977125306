"""``Transport``: how a call reaches a service — and ``InProcessTransport``, the monolith's.

Every transport moves JSON text: the proxy serializes the arguments before ``send`` and parses
the reply after it, so moving a service from in-process to HTTP or NATS changes no behaviour
(an argument that does not serialize fails the same way in all of them).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bloge.core.errors import BlogeUsageError
from bloge.rpc.calls import (
    SERVICE_NAME,
    Handler,
    Metadata,
    check_metadata,
    dispatch,
    timeout_of,
)
from bloge.rpc.errors import RemoteError

#: The largest payload (either way) by default: what ``bloge serve`` takes, and NATS's default.
DEFAULT_MAX_PAYLOAD = 1024 * 1024


@runtime_checkable
class Transport(Protocol):
    """Carries one call: ``payload`` (JSON text) to ``method`` of ``service``, its reply back.

    ``deadline`` is how many seconds the call may take (the receiving side stops the work when
    it passes); ``metadata`` travels with the call (auth, tracing, ``idempotency-key``).
    Failures are raised as :class:`~bloge.rpc.RemoteError`.
    """

    async def send(self, service: str, method: str, payload: str, *,
                   deadline: float | None = None, metadata: Metadata | None = None) -> str:
        ...


class InProcessTransport:
    """Services registered in this process, called as a network transport would call them:
    payloads are text both ways, sizes are limited (``max_payload_bytes``), deadlines and
    metadata reach the handler.

    >>> transport = InProcessTransport()
    >>> transport.register("kb", rpc.serve(BundledKnowledgeBase(), as_=KnowledgeBase))
    """

    def __init__(self, *, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD) -> None:
        self.max_payload_bytes = max_payload_bytes
        self._handlers: dict[str, Handler] = {}

    def register(self, service: str, handler: Handler, *, replace: bool = False) -> None:
        """Route calls of ``service`` to ``handler(method, payload) -> payload``.

        One handler per service name (exact, case included), as over HTTP and NATS, where
        the handlers are one mapping: registering a name again raises ``BlogeUsageError``
        unless ``replace=True`` says the new handler is meant to take over.
        """
        if not SERVICE_NAME.fullmatch(service):
            raise BlogeUsageError(f"{service!r} cannot name a service: use letters, digits, - "
                                  "and _, as bloge.rpc.services and the HTTP and NATS "
                                  "transports do")
        if service in self._handlers and not replace:
            raise BlogeUsageError(f"a service is already registered under {service!r} on "
                                  "this InProcessTransport; register each service once, or "
                                  "pass replace=True to swap its handler")
        self._handlers[service] = handler

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(self._handlers)

    async def send(self, service: str, method: str, payload: str, *,
                   deadline: float | None = None, metadata: Metadata | None = None) -> str:
        checked = check_metadata(metadata)
        handler = self._handlers.get(service)
        if handler is None:
            raise RemoteError("not_found", f"no service {service!r} is registered here"
                              + (f" (there are: {', '.join(sorted(self._handlers))})"
                                 if self._handlers else ""))
        self._check_size(payload, "the arguments of", service, method)
        reply = await dispatch(handler, service, method, payload, time_left=timeout_of(deadline),
                               metadata=checked)
        self._check_size(reply, "the reply of", service, method)
        return reply

    def _check_size(self, payload: str, what: str, service: str, method: str) -> None:
        size = len(payload.encode())
        if size > self.max_payload_bytes:
            raise RemoteError("resource_exhausted", f"{what} {service}.{method} take {size} "
                              f"bytes, more than the limit of {self.max_payload_bytes}")
