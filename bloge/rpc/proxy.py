"""``proxy(Interface, transport)``: an object implementing ``Interface`` whose every call goes
through ``transport`` — and the retry rule every caller follows.

A call is retried (with tenacity, a fresh ``AsyncRetrying`` per call) only when it failed as
``unavailable`` or ``deadline_exceeded`` *and* running it twice does no harm: its method is
marked :func:`~bloge.rpc.idempotent`, or the call carries an ``idempotency-key``, which the
service de-duplicates (see :func:`~bloge.rpc.serve`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from bloge.rpc.calls import IDEMPOTENCY_KEY, Metadata, checked_deadline
from bloge.rpc.errors import RemoteError
from bloge.rpc.interface import MethodSpec, methods_of
from bloge.rpc.transport import Transport

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """How often a retryable call is tried, and the exponential wait between attempts."""

    max_attempts: int = 3
    initial_backoff: float = 0.1
    multiplier: float = 2.0
    max_backoff: float = 2.0


NO_RETRY = Retry(max_attempts=1)


@dataclass(frozen=True, slots=True)
class CallOptions:
    deadline: float | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


_OPTIONS: contextvars.ContextVar[CallOptions | None] = contextvars.ContextVar(
    "bloge_rpc_options", default=None)


@contextlib.contextmanager
def call_options(*, deadline: float | None = None, metadata: Metadata | None = None,
                 idempotency_key: str | None = None) -> Iterator[None]:
    """Options for the proxy calls made inside the block (a typed method has no room for
    them): a ``deadline`` in seconds, ``metadata``, an ``idempotency_key`` that makes a call
    safe to retry.

    >>> with rpc.call_options(idempotency_key=f"refund-{order_id}"):
    ...     await payments.refund(order_id, amount)
    """
    deadline = checked_deadline(deadline, "call_options()")
    extra = dict(metadata or {})
    if idempotency_key is not None:
        extra[IDEMPOTENCY_KEY] = idempotency_key
    outer = _OPTIONS.get()
    merged = CallOptions(deadline if deadline is not None else (outer.deadline if outer else None),
                         {**(outer.metadata if outer else {}), **extra})
    token = _OPTIONS.set(merged)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


async def call(transport: Transport, service: str, spec: MethodSpec | None, method: str,
               payload: str, *, deadline: float | None = None,
               metadata: Metadata | None = None, retry: Retry = NO_RETRY) -> str:
    """Send one call, retrying it when the rule above allows."""
    options = _OPTIONS.get()
    if options is not None:
        deadline = options.deadline if options.deadline is not None else deadline
        metadata = {**(metadata or {}), **options.metadata}
    safe = (spec is not None and spec.idempotent) or IDEMPOTENCY_KEY in (metadata or {})
    if not safe or retry.max_attempts <= 1:
        return await transport.send(service, method, payload, deadline=deadline,
                                    metadata=metadata)
    # tenacity loads with the first call that may be retried.
    from tenacity import (  # noqa: PLC0415 -- see above
        AsyncRetrying,
        retry_if_exception,
        stop_after_attempt,
        wait_exponential,
    )

    retrying = AsyncRetrying(
        stop=stop_after_attempt(retry.max_attempts),
        wait=wait_exponential(multiplier=retry.initial_backoff, exp_base=retry.multiplier,
                              max=retry.max_backoff),
        retry=retry_if_exception(lambda exc: isinstance(exc, RemoteError) and exc.retryable),
        reraise=True)
    async for attempt in retrying:
        with attempt:
            return await transport.send(service, method, payload, deadline=deadline,
                                        metadata=metadata)
    raise AssertionError("unreachable: tenacity reraises the last failure")  # pragma: no cover


def proxy(interface: type[T], transport: Transport, service: str | None = None, *,
          deadline: float | None = None, metadata: Metadata | None = None,
          retry: Retry | None = None) -> T:
    """An object implementing ``interface`` (a ``typing.Protocol`` of async methods) whose
    calls go to ``service`` (default: the interface's name) over ``transport``.

    Arguments are validated and serialized before they are sent, the reply validated against
    the declared return type; a failure anywhere is a :class:`~bloge.rpc.RemoteError`.
    ``deadline`` (seconds) and ``metadata`` apply to every call unless
    :func:`call_options` says otherwise; ``retry`` is for calls the retry rule allows.
    """
    specs = methods_of(cast("type", interface))
    name = service or interface.__name__
    deadline = checked_deadline(deadline, f"the proxy of {name}")
    policy = retry or Retry()
    fixed = dict(metadata or {})

    def method_of(spec: MethodSpec) -> Callable[..., Any]:
        where = f"{name}.{spec.name}"

        async def remote_method(_self: object, *args: Any, **kwargs: Any) -> Any:
            payload = spec.encode_call(where, args, kwargs)
            reply = await call(transport, name, spec, spec.name, payload, deadline=deadline,
                               metadata=fixed, retry=policy)
            return spec.decode_result(where, reply)

        remote_method.__name__ = remote_method.__qualname__ = spec.name
        remote_method.__doc__ = spec.doc
        return remote_method

    namespace: dict[str, Any] = {spec.name: method_of(spec) for spec in specs.values()}
    shown = f"<rpc proxy {interface.__name__} → {name} over {type(transport).__name__}>"
    namespace["__repr__"] = lambda _self: shown
    namespace["__slots__"] = ()
    klass = type(f"{interface.__name__}Proxy", (), namespace)
    return cast("T", klass())
