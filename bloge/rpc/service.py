"""``serve(implementation, as_=Interface)``: the handler that exposes an implementation on any
transport (``transport.register(name, handler)``, ``bloge serve``, a NATS responder).

The implementation is checked once, at registration: every method of the interface present,
with the same parameters. Each call's arguments are validated before the implementation runs
and its result is validated before it is sent. A call that carries an ``idempotency-key``
runs once per key: a repeat (a retry after a lost reply, say) waits for the first run and gets
its reply, success or failure (a first run stopped before it answered, by its deadline
say, leaves the outcome unknown: repeats are answered ``unavailable`` and it is not run
again, unless the method is idempotent); the replies are kept for ``replay_ttl`` seconds,
the last ``replay_capacity`` of them, in this process — unless the transport shares them between the
replicas of the service (:class:`~bloge.rpc.NatsResponder`, in a JetStream bucket).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import time
import typing
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from bloge.core.errors import BlogeUsageError
from bloge.core.workers import DEFAULT_WORKERS
from bloge.rpc.calls import IDEMPOTENCY_KEY, as_remote_error, current_call, shared_replies
from bloge.rpc.errors import RemoteError, outcome_unknown
from bloge.rpc.interface import MethodSpec, methods_of


@dataclass(slots=True)
class _Replay:
    fingerprint: str
    stored_at: float
    done: asyncio.Event
    reply: str | None = None
    error: RemoteError | None = None


class ServiceHandler:
    """``await handler(method, payload) -> payload`` for one implementation of an interface."""

    #: Awaited by the transports (never run on a worker thread).
    is_async = True

    def __init__(self, implementation: object, interface: type, *,
                 replay_ttl: float = 600.0, replay_capacity: int = 10_000) -> None:
        self.interface = interface
        self.implementation = implementation
        self.specs = methods_of(interface)
        self._methods = {name: _checked(implementation, interface, spec)
                         for name, spec in self.specs.items()}
        self._awaited = {name: inspect.iscoroutinefunction(function)
                         for name, function in self._methods.items()}
        self._replay_ttl = replay_ttl
        self._replay_capacity = replay_capacity
        self._replays: OrderedDict[tuple[str, str], _Replay] = OrderedDict()

    async def __call__(self, method: str, payload: str) -> str:
        spec = self.specs.get(method)
        served = current_call()
        where = f"{served.service if served else self.interface.__name__}.{method}"
        if spec is None:
            raise RemoteError("not_found", f"{where}: no such method (there are: "
                              f"{', '.join(sorted(self.specs))})")
        key = served.metadata.get(IDEMPOTENCY_KEY) if served else None
        if key is None:
            return await self._run(spec, where, payload)
        return await self._once(spec, where, payload, key)

    async def _run(self, spec: MethodSpec, where: str, payload: str) -> str:
        arguments = spec.decode_arguments(where, payload)
        function = self._methods[spec.name]
        if self._awaited[spec.name]:
            result = await function(**arguments)
        else:
            result = await DEFAULT_WORKERS.run(lambda: function(**arguments))
        return spec.encode_result(where, result)

    async def _once(self, spec: MethodSpec, where: str, payload: str, key: str) -> str:
        fingerprint = hashlib.sha256(payload.encode()).hexdigest()
        shared, served = shared_replies(), current_call()
        if shared is not None and served is not None:
            return await shared.once(served, key, fingerprint, where=where,
                                     idempotent=spec.idempotent,
                                     run=lambda: self._run(spec, where, payload))
        self._forget_expired()
        replay = self._replays.get((spec.name, key))
        if replay is not None:
            if replay.fingerprint != fingerprint:
                raise RemoteError("invalid_argument", f"{where}: idempotency key {key!r} was "
                                  "used before with other arguments")
            await replay.done.wait()
            if replay.error is not None:
                raise replay.error
            assert replay.reply is not None
            return replay.reply
        replay = _Replay(fingerprint, time.monotonic(), asyncio.Event())
        self._replays[(spec.name, key)] = replay
        try:
            replay.reply = await self._run(spec, where, payload)
        except Exception as exc:
            error = as_remote_error(exc, where)
            self._settle(spec.name, key, replay, error, keep=not error.retryable)
            if error is exc:
                raise
            raise error from exc
        except BaseException:
            # Stopped mid-run (its deadline passed, the server stopping): the outcome is
            # unknown. As across NATS replicas, an idempotent method may run again; another
            # one is not run twice for one key.
            if spec.idempotent:
                self._settle(spec.name, key, replay, RemoteError(
                    "unavailable", f"{where}: the first call with this idempotency key did "
                    "not finish; try again"), keep=False)
            else:
                self._settle(spec.name, key, replay, outcome_unknown(where), keep=True)
            raise
        self._settle(spec.name, key, replay, None, keep=True)
        return replay.reply

    def _settle(self, method: str, key: str, replay: _Replay, error: RemoteError | None, *,
                keep: bool) -> None:
        """Wake the repeats waiting for ``replay`` (its reply, or ``error``); keep it for
        later ones, or forget it so that the next one runs the call."""
        replay.error = error
        if not keep:
            self._replays.pop((method, key), None)
        replay.done.set()
        while len(self._replays) > self._replay_capacity:
            self._replays.popitem(last=False)

    def _forget_expired(self) -> None:
        horizon = time.monotonic() - self._replay_ttl
        while self._replays:
            oldest = next(iter(self._replays.values()))
            if oldest.stored_at >= horizon or not oldest.done.is_set():
                return
            self._replays.popitem(last=False)

    def __repr__(self) -> str:
        return (f"<rpc service {self.interface.__name__} by "
                f"{type(self.implementation).__name__}>")


def serve(implementation: object, *, as_: type, replay_ttl: float = 600.0,
          replay_capacity: int = 10_000) -> ServiceHandler:
    """A handler exposing ``implementation`` as the interface ``as_``, for any transport's
    ``register``; ``BlogeUsageError`` naming the method when it does not implement it."""
    return ServiceHandler(implementation, as_, replay_ttl=replay_ttl,
                          replay_capacity=replay_capacity)


def _checked(implementation: object, interface: type, spec: MethodSpec) -> Any:
    where = f"{type(implementation).__name__}.{spec.name}"
    function = getattr(implementation, spec.name, None)
    if not callable(function):
        raise BlogeUsageError(f"{type(implementation).__name__} does not implement "
                              f"{interface.__name__}: it has no method {spec.name!r}")
    declared = [p for i, p in enumerate(spec.signature.parameters.values()) if i > 0]
    try:
        given = list(inspect.signature(function).parameters.values())
        hints = typing.get_type_hints(function)
    except (TypeError, ValueError, NameError) as exc:
        raise BlogeUsageError(f"{where}: its signature cannot be read ({exc})") from exc
    names = [p.name for p in given if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if names != [p.name for p in declared]:
        raise BlogeUsageError(f"{where} takes ({', '.join(names)}) but "
                              f"{interface.__name__}.{spec.name} declares "
                              f"({', '.join(p.name for p in declared)})")
    declared_hints = typing.get_type_hints(getattr(interface, spec.name))
    for name in (*names, "return"):
        if name in hints and name in declared_hints and hints[name] != declared_hints[name]:
            raise BlogeUsageError(f"{where}: {name} is {hints[name]!r} but "
                                  f"{interface.__name__}.{spec.name} declares "
                                  f"{declared_hints[name]!r}")
    return function
