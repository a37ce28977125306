"""Keyed calls de-duplicated across the replicas of a NATS-served service, in a JetStream
key-value bucket (extra ``[nats]``).

A replica that receives a call with an ``idempotency-key`` claims the key first (KV
``create``: it fails when the key exists), runs the handler while renewing the claim every
third of ``lease`` seconds, then stores the reply — or the error — under the key, where it
stays for the bucket's ``max_age`` (``ttl``). A replica that receives the same call (a retry
that another replica got) finds the key claimed and waits for what is stored there, within the
call's deadline. A claim that is not renewed for ``lease`` seconds (counted from when it was
last written, so that retries with deadlines shorter than the lease get there) belongs to a
replica that died mid-call: the outcome of its call is unknown, so a method that is not
idempotent is answered ``unavailable`` (``the outcome is unknown``) and never run again; an
idempotent one is claimed afresh and run. A handler that fails ``unavailable`` or
``deadline_exceeded`` by itself releases the claim (the call may run again), as the per-process
de-duplication does; one stopped mid-run (its deadline passed) leaves the outcome unknown,
like a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from bloge.core.ids import new_id
from bloge.rpc.calls import CallInfo, as_remote_error
from bloge.rpc.errors import RemoteError, outcome_unknown

log = logging.getLogger("bloge.rpc")

DEFAULT_BUCKET = "bloge_rpc_replies"
DEFAULT_TTL = 24 * 3600.0
DEFAULT_LEASE = 10.0

_RUNNING, _DONE, _FAILED, _UNKNOWN = "running", "done", "failed", "unknown"


class _Running:
    """The claim read is still running: watch it."""


_RUNNING_STILL = _Running()


@dataclass(slots=True)
class _Claim:
    """A claim this replica holds: the revision of the key it last wrote, and the token its
    value carries (to know it again after a write whose acknowledgement was lost)."""

    revision: int
    token: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    lost: bool = False


class JetStreamReplies:
    """The :class:`~bloge.rpc.calls.SharedReplies` of a JetStream KV bucket (see the module
    docs); open it with :meth:`open`."""

    def __init__(self, kv: KeyValue, *, bucket: str, namespace: str, lease: float) -> None:
        self._kv = kv
        self.bucket = bucket
        self.namespace = namespace
        self.lease = lease

    @classmethod
    async def open(cls, client: Client, *, bucket: str = DEFAULT_BUCKET,
                   ttl: float = DEFAULT_TTL, lease: float = DEFAULT_LEASE,
                   namespace: str = "bloge.rpc") -> JetStreamReplies:
        """The bucket ``bucket`` (created with ``max_age`` ``ttl`` when missing); raises
        ``nats.errors.Error`` (or ``TimeoutError``) when JetStream is not available."""
        js = client.jetstream()
        try:
            kv = await js.key_value(bucket)
        except nats.js.errors.BucketNotFoundError:
            try:
                kv = await js.create_key_value(
                    bucket=bucket, history=1, ttl=ttl,
                    description="bloge.rpc: replies of keyed calls, shared by replicas")
            except nats.js.errors.BadRequestError:
                kv = await js.key_value(bucket)  # another replica created it meanwhile
        else:
            kept = (await kv.status()).ttl
            if kept is not None and abs(kept - ttl) > 1e-3:
                log.warning("rpc: the JetStream bucket %s keeps replies %.0fs, not the %.0fs "
                            "asked for (it was created so; change it with the nats CLI)",
                            bucket, kept, ttl)
        return cls(kv, bucket=bucket, namespace=namespace, lease=lease)

    def _name(self, call: CallInfo, key: str) -> str:
        digest = hashlib.sha256(key.encode()).hexdigest()
        return f"{self.namespace}.{call.service}.{call.method}.{digest}"

    async def once(self, call: CallInfo, key: str, fingerprint: str, *, where: str,
                   idempotent: bool, run: Callable[[], Awaitable[str]]) -> str:
        name = self._name(call, key)
        token = new_id()
        claim = self._encode(_RUNNING, fingerprint, owner=token)
        while True:
            try:
                revision = await self._kv.create(name, claim)
            except nats.js.errors.KeyWrongLastSequenceError:
                outcome = await self._wait(name, fingerprint, token, where=where,
                                           idempotent=idempotent)
                if isinstance(outcome, str):
                    return outcome
                if outcome is None:
                    continue  # released: claim it again
                revision = outcome
            except (nats.errors.Error, TimeoutError) as exc:
                raise RemoteError("unavailable", f"{where}: the idempotency key cannot be "
                                  f"claimed in JetStream ({type(exc).__name__}); the call did "
                                  "not run") from None
            return await self._own(name, _Claim(revision, token), fingerprint, where=where,
                                   idempotent=idempotent, run=run)

    async def _own(self, name: str, claim: _Claim, fingerprint: str, *, where: str,
                   idempotent: bool, run: Callable[[], Awaitable[str]]) -> str:
        renewing = asyncio.create_task(self._renew(name, claim, fingerprint))
        try:
            reply = await run()
        except Exception as exc:
            error = as_remote_error(exc, where)
            await self._stop(renewing, claim)
            if error.retryable:  # the handler says it did not run: it may run again
                await self._settle(name, claim, None, where)
            else:
                await self._settle(name, claim, self._encode(
                    _FAILED, fingerprint, body=error.to_json()), where,
                    fallback=self._encode(_UNKNOWN, fingerprint))
            if error is exc:
                raise
            raise error from exc
        except BaseException:
            # Stopped mid-run (its deadline, the replica stopping): the outcome is unknown.
            await self._stop(renewing, claim)
            await self._settle(name, claim, None if idempotent else self._encode(
                _UNKNOWN, fingerprint), where)
            raise
        await self._stop(renewing, claim)
        await self._settle(name, claim, self._encode(_DONE, fingerprint, body=reply), where,
                           fallback=self._encode(_UNKNOWN, fingerprint))
        return reply

    async def _renew(self, name: str, claim: _Claim, fingerprint: str) -> None:
        value = self._encode(_RUNNING, fingerprint, owner=claim.token)
        while True:
            await asyncio.sleep(self.lease / 3)
            async with claim.lock:
                try:
                    claim.revision = await self._kv.update(name, value, last=claim.revision)
                except nats.js.errors.KeyWrongLastSequenceError:
                    if await self._still_ours(name, claim):
                        continue
                    claim.lost = True
                    log.warning("rpc: the claim of %s was taken over (this replica was "
                                "silent for longer than the lease of %gs)", name, self.lease)
                    return
                except (nats.errors.Error, TimeoutError) as exc:
                    log.warning("rpc: the claim of %s was not renewed (%s)", name,
                                type(exc).__name__)

    async def _still_ours(self, name: str, claim: _Claim) -> bool:
        """Whether the key still holds this claim (a renewal whose acknowledgement was lost
        moved its revision on); if so, the claim's revision is brought up to date."""
        try:
            entry = await self._kv.get(name)
            head = (entry.value or b"").partition(b"\n")[0]
            ours = json.loads(head).get("owner") == claim.token if head else False
        except (nats.errors.Error, TimeoutError, ValueError):
            return False
        if ours and entry.revision is not None:
            claim.revision = entry.revision
            return True
        return False

    @staticmethod
    async def _stop(renewing: asyncio.Task[None], claim: _Claim) -> None:
        async with claim.lock:  # never cancelled while it writes: the revision stays known
            renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing

    async def _settle(self, name: str, claim: _Claim, value: bytes | None, where: str, *,
                      fallback: bytes | None = None) -> None:
        """Store ``value`` under the claim (``None``: release it), if the claim is still ours;
        ``fallback`` when ``value`` cannot be stored (a reply larger than the bucket takes)."""
        lost = ("rpc: %s finished after another replica declared its outcome unknown; its "
                "reply is not stored")
        if claim.lost:
            log.warning(lost, where)
            return
        try:
            try:
                await self._write(name, claim, value)
            except nats.js.errors.KeyWrongLastSequenceError:
                if not await self._still_ours(name, claim):
                    raise
                await self._write(name, claim, value)
        except nats.js.errors.KeyWrongLastSequenceError:
            log.warning(lost, where)
        except (nats.errors.Error, TimeoutError) as exc:
            # Unstored, the claim runs out: the other replicas answer that the outcome is
            # unknown, which is the truth seen from them.
            log.warning("rpc: the reply of %s was not stored in JetStream (%s)", where,
                        type(exc).__name__)
            if fallback is not None and not isinstance(
                    exc, nats.errors.ConnectionClosedError | TimeoutError):
                with contextlib.suppress(nats.errors.Error, TimeoutError):
                    await self._write(name, claim, fallback)

    async def _write(self, name: str, claim: _Claim, value: bytes | None) -> None:
        async with asyncio.timeout(self.lease):
            if value is None:
                await self._kv.delete(name, last=claim.revision)
            else:
                await self._kv.update(name, value, last=claim.revision)

    async def _wait(self, name: str, fingerprint: str, token: str, *, where: str,
                    idempotent: bool) -> str | int | None:
        """What another replica's claim of ``name`` came to: its reply (``str``), the revision
        of this replica's own claim after taking over a dead one (``int``), ``None`` when the
        claim was released; raises its error, or ``unavailable`` when the outcome is unknown."""
        try:
            entry = await self._kv.get(name)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        except (nats.errors.Error, TimeoutError) as exc:
            raise RemoteError("unavailable", f"{where}: the claim of the idempotency key "
                              f"cannot be read from JetStream ({type(exc).__name__})") from None
        # The usual retry finds the reply stored: one read. A claim still running is watched.
        settled = await self._settled(name, entry, fingerprint, token, where=where,
                                      idempotent=idempotent)
        if not isinstance(settled, _Running):
            return settled
        try:
            watcher = await self._kv.watch(name)
        except (nats.errors.Error, TimeoutError) as exc:
            raise RemoteError("unavailable", f"{where}: another replica is running the call "
                              "with this idempotency key, and JetStream cannot be watched "
                              f"for its reply ({type(exc).__name__})") from None
        try:
            running: KeyValue.Entry | None = entry
            written: dt.datetime | None = None  # when the running claim was written
            while True:
                try:
                    update: KeyValue.Entry | None = await watcher.updates(  # type: ignore[no-untyped-call]  # nats-py leaves it unannotated
                        timeout=self._left(written) if running is not None else self.lease)
                except nats.errors.TimeoutError:
                    if running is None:
                        return None
                    # The owner renewed nothing for a lease: it died mid-call.
                    taken = await self._abandoned(name, running, fingerprint, token,
                                                  where=where, idempotent=idempotent)
                    if taken is not None:
                        return taken
                    running = None
                    continue
                if update is None:
                    continue  # the watch's "caught up" marker
                if running is not None and update.revision == running.revision:
                    written = _written(update)  # the entry already read: its age, at last
                    continue
                settled = await self._settled(name, update, fingerprint, token, where=where,
                                              idempotent=idempotent)
                if not isinstance(settled, _Running):
                    return settled
                running, written = update, _written(update)
        finally:
            with contextlib.suppress(nats.errors.Error, TimeoutError):
                await watcher.stop()  # type: ignore[no-untyped-call]  # nats-py leaves it unannotated

    def _left(self, written: dt.datetime | None) -> float:
        """How long a claim written at ``written`` (the NATS server's clock; ``None``: not
        known yet) may still go unrenewed before its owner counts as dead. From when it was
        written, not from when this replica began to wait: a caller whose deadline is shorter
        than the lease retries, and each retry must come closer to the end of the lease. (A
        live owner renews every third of the lease: the clocks would have to differ by more
        than the other two thirds to take its claim.)"""
        if written is None:
            return self.lease
        age = (dt.datetime.now(dt.UTC) - written).total_seconds()
        return min(self.lease, max(0.001, self.lease - age))

    async def _settled(self, name: str, entry: KeyValue.Entry, fingerprint: str, token: str,
                       *, where: str, idempotent: bool) -> str | int | _Running | None:
        """What ``entry`` says of the call: as :meth:`_wait`, or :data:`_RUNNING_STILL`."""
        if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
            return None
        head, _, body = entry.value.partition(b"\n")
        state = json.loads(head)
        if state.get("fingerprint") != fingerprint:
            raise RemoteError("invalid_argument", f"{where}: idempotency key was used before "
                              "with other arguments")
        match state.get("state"):
            case "done":
                return body.decode()
            case "failed":
                raise RemoteError.from_json(body)
            case "unknown":
                if not idempotent:
                    raise outcome_unknown(where)
                taken = await self._abandoned(name, entry, fingerprint, token, where=where,
                                              idempotent=True)
                return _RUNNING_STILL if taken is None else taken
            case _:
                return _RUNNING_STILL
    async def _abandoned(self, name: str, entry: KeyValue.Entry, fingerprint: str,
                         token: str, *, where: str, idempotent: bool) -> int | None:
        """A claim left at ``entry`` for a lease: taken over (the new revision) when the
        method is idempotent, else marked unknown and ``unavailable`` raised; ``None`` when the
        key changed meanwhile (watch it again)."""
        value = (self._encode(_RUNNING, fingerprint, owner=token) if idempotent
                 else self._encode(_UNKNOWN, fingerprint))
        try:
            revision = await self._kv.update(name, value, last=entry.revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            return None
        except (nats.errors.Error, TimeoutError) as exc:
            raise RemoteError("unavailable", f"{where}: JetStream is not usable "
                              f"({type(exc).__name__}); the outcome of the call with this "
                              "idempotency key is unknown") from None
        if idempotent:
            log.warning("rpc: %s: the replica that claimed the call stopped answering; "
                        "running it again (the method is idempotent)", where)
            return revision
        raise outcome_unknown(where)

    @staticmethod
    def _encode(state: str, fingerprint: str, *, body: str = "", **extra: Any) -> bytes:
        """A line of JSON (the state), then the reply or the error JSON as it is (no escaping:
        a reply takes the bytes it takes on the wire, plus the line)."""
        head = json.dumps({"state": state, "fingerprint": fingerprint, **extra})
        return f"{head}\n{body}".encode()

    def __repr__(self) -> str:
        return f"<rpc replies in JetStream bucket {self.bucket} (lease {self.lease:g}s)>"


def _written(entry: KeyValue.Entry) -> dt.datetime | None:
    """When the NATS server stored ``entry`` (a watch's entries say; nats-py annotates the
    field as an ``int``, and gives a ``datetime``)."""
    created: object = entry.created
    return created if isinstance(created, dt.datetime) else None
