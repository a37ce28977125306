"""The NATS transport (extra ``[nats]``, nats-py): request-reply on ``bloge.rpc.<service>.
<method>``, answered by :class:`NatsResponder` replicas in one queue group per service, so
that N replicas share the calls and one can stop (or die) while the others answer.

A reply is the JSON result, or the error JSON with the header ``Bloge-Status: error``; the
deadline travels as the header ``Bloge-Timeout-Ms`` and metadata as headers of their own
names. The connection reconnects by itself (nats-py's default); a call whose reply was lost
with a connection fails as ``deadline_exceeded`` (its outcome is unknown) and is retried only
when the retry rule of :mod:`bloge.rpc.proxy` allows.

Keyed calls (``idempotency-key``) are de-duplicated across the replicas in a JetStream
key-value bucket (:mod:`bloge.rpc.jetstream`): a retry that reaches another replica gets the
first run's reply instead of running again. Without JetStream on the server, each replica
de-duplicates on its own, and the responder says so in the log (``responder.dedup``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self

try:
    import nats
    import nats.errors
    from nats.aio.client import Client
    from nats.aio.msg import Msg
    from nats.aio.subscription import Subscription
except ImportError as exc:  # pragma: no cover - depends on the extras installed
    raise ImportError("the NATS transport needs nats-py: pip install 'bloge[nats]'") from exc

from bloge.core.masking import mask_url_credentials
from bloge.rpc.calls import (
    SERVICE_NAME,
    TIMEOUT_HEADER,
    Handler,
    Metadata,
    check_metadata,
    dispatch,
    reply_wait,
)
from bloge.rpc.errors import RemoteError
from bloge.rpc.jetstream import DEFAULT_BUCKET, DEFAULT_LEASE, DEFAULT_TTL, JetStreamReplies

log = logging.getLogger("bloge.rpc")

SUBJECT_PREFIX = "bloge.rpc"
STATUS_HEADER = "bloge-status"
#: Time a reply may take past the deadline: the responder's own deadline answer comes first.


async def _log_error(exc: Exception) -> None:
    """nats-py's errors (a lost connection, a reconnect attempt), one line each in the log."""
    log.warning("nats: %s: %s", type(exc).__name__, mask_url_credentials(str(exc)))


def subject(service: str, method: str, prefix: str = SUBJECT_PREFIX) -> str:
    for part in (service, method):
        if not SERVICE_NAME.fullmatch(part):
            raise RemoteError("invalid_argument", f"{part!r} cannot be part of a NATS subject: "
                              "use letters, digits, - and _")
    return f"{prefix}.{service}.{method}"


def _servers(servers: str | Sequence[str]) -> list[str]:
    return [s.strip() for s in servers.split(",")] if isinstance(servers, str) else list(servers)


class _Connection:
    """One lazily opened nats-py connection, shared by the calls of a transport."""

    def __init__(self, servers: str | Sequence[str], options: Mapping[str, Any]) -> None:
        self.servers = _servers(servers)
        self._options = dict(options)
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    def shown(self) -> str:
        return ", ".join(mask_url_credentials(s) for s in self.servers)

    async def get(self) -> Client:
        if self._client is not None and not self._client.is_closed:
            return self._client
        async with self._lock:
            if self._client is None or self._client.is_closed:
                self._client = await self._connect()
        return self._client

    async def _connect(self) -> Client:
        # Reconnecting forever once connected is what a service wants; never connecting at
        # all must fail the call instead: the first connection has connect_timeout seconds.
        # nats-py retries a refused or rejected connection until the timeout, telling each
        # failure only to error_cb: the last one is why the connection could not be made.
        client = Client()
        told = self._options.get("error_cb", _log_error)
        last: list[Exception] = []

        async def remember(exc: Exception) -> None:
            # The server's own word (Authorization Violation, say) is followed by the
            # connection it closes: the reset says less than what came before it.
            if not (isinstance(exc, OSError) and last and not isinstance(last[0], OSError)):
                last[:] = [exc]
            await told(exc)

        options = {**self._options, "error_cb": remember}
        timeout = options.get("connect_timeout", 5)
        try:
            async with asyncio.timeout(timeout):
                await client.connect(self.servers, **options)
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            with contextlib.suppress(nats.errors.Error):
                await client.close()
            said = bool(last) and not isinstance(last[0], OSError)
            cause = last[0] if last and (said or isinstance(exc, TimeoutError)) else exc
            why = (f"no connection within {timeout:g} s" if cause is exc
                   and isinstance(exc, TimeoutError) else
                   f"{type(cause).__name__}: {mask_url_credentials(str(cause))}")
            raise RemoteError("unavailable", f"cannot connect to NATS at {self.shown()} "
                              f"({why})") from None
        return client

    async def close(self) -> None:
        if self._client is not None and not self._client.is_closed:
            await self._client.close()
        self._client = None


class NatsTransport:
    """Calls services answered over NATS at ``servers`` (a list, or comma-separated text).

    ``timeout`` bounds a call that has no deadline; other keywords go to ``nats.connect``
    (``user``, ``password``, ``token``, ``user_credentials``, ``tls``, …). Close it with
    ``aclose()``."""

    def __init__(self, servers: str | Sequence[str] = "nats://127.0.0.1:4222", *,
                 timeout: float = 60.0, subject_prefix: str = SUBJECT_PREFIX,
                 **connect: Any) -> None:
        connect.setdefault("connect_timeout", 5)
        connect.setdefault("max_reconnect_attempts", -1)
        self._connection = _Connection(servers, connect)
        self.timeout = timeout
        self.subject_prefix = subject_prefix

    async def send(self, service: str, method: str, payload: str, *,
                   deadline: float | None = None, metadata: Metadata | None = None) -> str:
        headers = check_metadata(metadata)
        wait = reply_wait(service, method, deadline, headers, self.timeout)
        to = subject(service, method, self.subject_prefix)
        client = await self._connection.get()
        data = payload.encode()
        if len(data) > client.max_payload:
            raise RemoteError("resource_exhausted", f"the arguments of {service}.{method} take "
                              f"{len(data)} bytes, more than the NATS server's limit of "
                              f"{client.max_payload}")
        try:
            reply = await client.request(to, data, timeout=wait, headers=headers or None)
        except nats.errors.NoRespondersError:
            raise RemoteError("unavailable", f"{service}.{method}: no responder for {to!r} "
                              f"on NATS at {self._connection.shown()}") from None
        except nats.errors.TimeoutError:
            raise RemoteError("deadline_exceeded", f"{service}.{method}: no reply within "
                              f"{wait:.3g}s; the outcome is unknown") from None
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError,
                nats.errors.OutboundBufferLimitError, nats.errors.StaleConnectionError) as exc:
            raise RemoteError("unavailable", f"{service}.{method}: the NATS connection is "
                              f"not usable ({type(exc).__name__})") from exc
        if (reply.headers or {}).get(STATUS_HEADER) == "error":
            raise RemoteError.from_json(reply.data)
        return reply.data.decode()

    async def aclose(self) -> None:
        await self._connection.close()

    def __repr__(self) -> str:
        return f"NatsTransport({self._connection.shown()!r})"


class NatsResponder:
    """Answers calls of ``handlers`` (service name → handler) arriving over NATS, in the
    queue group ``bloge.rpc.<service>`` so that replicas share them; at most
    ``max_concurrent`` at a time (more wait in the subscription's queue).

    >>> responder = NatsResponder({"kb": rpc.serve(kb, as_=KnowledgeBase)}, servers)
    >>> await responder.start()
    >>> ...
    >>> await responder.stop()   # finishes the calls it has, takes no new ones
    """

    def __init__(self, handlers: Mapping[str, Handler],
                 servers: str | Sequence[str] = "nats://127.0.0.1:4222", *,
                 max_concurrent: int = 100, subject_prefix: str = SUBJECT_PREFIX,
                 replies_bucket: str | None = DEFAULT_BUCKET, replies_ttl: float = DEFAULT_TTL,
                 claim_lease: float = DEFAULT_LEASE, **connect: Any) -> None:
        connect.setdefault("connect_timeout", 5)
        connect.setdefault("max_reconnect_attempts", -1)
        if claim_lease <= 0 or replies_ttl <= 0:
            raise ValueError("claim_lease and replies_ttl are seconds, more than 0")
        self.handlers = dict(handlers)
        self.subject_prefix = subject_prefix
        self.replies_bucket = replies_bucket
        self.replies_ttl = replies_ttl
        self.claim_lease = claim_lease
        self._replies: JetStreamReplies | None = None
        #: How keyed calls are de-duplicated, once started: across the replicas (JetStream)
        #: or in this process only, and why.
        self.dedup = "not started"
        self._connection = _Connection(servers, connect)
        self._slots = asyncio.Semaphore(max_concurrent)
        self._running: set[asyncio.Task[None]] = set()
        self._subscriptions: list[Subscription] = []
        #: When the last call arrived (the event loop's clock).
        self._last_call = 0.0

    async def start(self) -> None:
        """Subscribe to every service; calls are answered from now on."""
        client = await self._connection.get()
        await self._open_replies(client)
        for service in self.handlers:
            subject(service, "x", self.subject_prefix)
            self._subscriptions.append(await client.subscribe(
                f"{self.subject_prefix}.{service}.*", queue=f"{self.subject_prefix}.{service}",
                cb=self._received))
        await client.flush()

    async def _open_replies(self, client: Client) -> None:
        if self.replies_bucket is None:
            self.dedup = "per process (replies_bucket=None)"
            return
        try:
            self._replies = await JetStreamReplies.open(
                client, bucket=self.replies_bucket, ttl=self.replies_ttl,
                lease=self.claim_lease, namespace=self.subject_prefix)
        except (nats.errors.Error, TimeoutError) as exc:
            self.dedup = (f"per process: JetStream is not available on NATS at "
                          f"{self._connection.shown()} ({type(exc).__name__})")
            log.warning("rpc: keyed calls are de-duplicated %s; a retry that reaches another "
                        "replica runs again (enable JetStream on the server: nats-server -js)",
                        self.dedup)
            return
        self.dedup = (f"across replicas, in the JetStream bucket {self.replies_bucket} "
                      f"(replies kept {self.replies_ttl:g}s, claim lease {self.claim_lease:g}s)")
        log.info("rpc: keyed calls are de-duplicated %s", self.dedup)

    async def stop(self) -> None:
        """Take no new calls, finish those running, then close the connection."""
        client = await self._connection.get()
        for subscription in self._subscriptions:
            # Drained, not dropped: calls already delivered to this replica are answered.
            with contextlib.suppress(nats.errors.Error):
                await _drain(client, subscription, lambda: self._last_call)
        self._subscriptions.clear()
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        await self._connection.close()

    async def kill(self) -> None:
        """Drop the connection at once, as a crash would: calls running get no reply (their
        callers time out and retry what may be retried)."""
        self._subscriptions.clear()
        await self._connection.close()
        for task in self._running:
            task.cancel()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _received(self, msg: Msg) -> None:
        self._last_call = asyncio.get_running_loop().time()
        await self._slots.acquire()
        task = asyncio.create_task(self._answer(msg))
        self._running.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._slots.release()

    async def _answer(self, msg: Msg) -> None:
        if not msg.reply:
            return  # a publish, not a request: nobody waits for an answer
        _, _, rest = msg.subject.partition(self.subject_prefix + ".")
        service, _, method = rest.partition(".")
        headers = dict(msg.headers or {})
        try:
            reply = await dispatch(self.handlers[service], service, method, msg.data.decode(),
                                   time_left=_timeout(headers.pop(TIMEOUT_HEADER, None)),
                                   metadata={k.lower(): v for k, v in headers.items()},
                                   replies=self._replies)
        except RemoteError as error:
            await self._publish(msg.reply, error.to_json().encode(), error=True)
            return
        except UnicodeDecodeError:
            refusal = RemoteError("invalid_argument", "the payload is not UTF-8 JSON")
            await self._publish(msg.reply, refusal.to_json().encode(), error=True)
            return
        data = reply.encode()
        client = await self._connection.get()
        if len(data) > client.max_payload:
            refusal = RemoteError("resource_exhausted", f"the reply of {service}.{method} takes "
                                  f"{len(data)} bytes, more than the NATS server's limit of "
                                  f"{client.max_payload}")
            await self._publish(msg.reply, refusal.to_json().encode(), error=True)
            return
        await self._publish(msg.reply, data, error=False)

    async def _publish(self, to: str, data: bytes, *, error: bool) -> None:
        client = await self._connection.get()
        with contextlib.suppress(nats.errors.ConnectionClosedError):
            await client.publish(to, data, headers={STATUS_HEADER: "error"} if error else None)


#: After a stopping replica's UNSUB, how long it must hear no call before it lets go of its
#: subscription (seconds), and the longest it waits for that.
DRAIN_QUIET = 0.05
DRAIN_LIMIT = 2.0
_DRAIN_API = ("_send_unsubscribe", "_remove_sub")
_SUBSCRIPTION_API = ("_id", "_pending_queue", "_stop_processing")


async def _drain(client: Client, subscription: Subscription,
                 last_call: Callable[[], float]) -> None:
    """nats-py's ``Subscription.drain``, except that the subscription is kept until no call
    has arrived for :data:`DRAIN_QUIET` seconds (:data:`DRAIN_LIMIT` at most).

    nats-py lets go of it right after the UNSUB's PING/PONG, yet the NATS server can still
    route calls to it then: the publisher's connection matches subscriptions from a cache
    of its own, in no order with the subscriber's UNSUB (seen here: 25 calls within 0.4 ms
    of the PONG, which nats-py dropped, their callers left waiting for their deadline).
    nats-py has no public way to keep a subscription past its UNSUB; where its private
    names are not what this expects, its own drain is used.
    """
    if not (all(hasattr(client, name) for name in _DRAIN_API)
            and all(hasattr(subscription, name) for name in _SUBSCRIPTION_API)):
        await subscription.drain()  # type: ignore[no-untyped-call]  # nats-py leaves it unannotated
        return
    sid = subscription._id  # noqa: SLF001 -- see the docstring
    await client._send_unsubscribe(sid)  # noqa: SLF001 -- as above
    await client.flush()
    loop = asyncio.get_running_loop()
    give_up = loop.time() + DRAIN_LIMIT
    while (now := loop.time()) < give_up:
        quiet_for = now - last_call()
        if quiet_for >= DRAIN_QUIET:
            break
        await asyncio.sleep(DRAIN_QUIET - quiet_for)  # a grace for calls still on their way
    await subscription._pending_queue.join()  # noqa: SLF001 -- as above
    subscription._stop_processing()  # noqa: SLF001 -- as above
    client._remove_sub(sid)  # noqa: SLF001 -- as above


def _timeout(header: str | None) -> float | None:
    if header is None or not header.isdigit():
        return None
    return int(header) / 1000
