"""Retries: only for ``unavailable``/``deadline_exceeded``, only when running twice does no
harm — an idempotent method, or a call with an idempotency key the service de-duplicates."""

from __future__ import annotations

import asyncio
import socket
from typing import Protocol

import pytest

from bloge import rpc
from bloge.rpc.calls import Metadata
from tests.rpc.services import Inventory, Shelf

FAST = rpc.Retry(max_attempts=3, initial_backoff=0, max_backoff=0)
ONCE = rpc.Retry(max_attempts=1)


class Flaky:
    """Fails the first ``failures`` calls with ``code``; ``after_delivery`` fails them after
    the service ran them (a reply lost on the way back)."""

    def __init__(self, inner: rpc.Transport, failures: int, *, code: rpc.ErrorCode = "unavailable",
                 after_delivery: bool = False) -> None:
        self.inner = inner
        self.failures = failures
        self.code = code
        self.after_delivery = after_delivery
        self.attempts = 0

    async def send(self, service: str, method: str, payload: str, *,
                   deadline: float | None = None, metadata: Metadata | None = None) -> str:
        self.attempts += 1
        failing = self.attempts <= self.failures
        if failing and not self.after_delivery:
            raise rpc.RemoteError(self.code, "the network is down")
        reply = await self.inner.send(service, method, payload, deadline=deadline,
                                      metadata=metadata)
        if failing:
            raise rpc.RemoteError(self.code, "the reply was lost")
        return reply


def served(shelf: Shelf) -> rpc.InProcessTransport:
    transport = rpc.InProcessTransport()
    transport.register("inventory", rpc.serve(shelf, as_=Inventory))
    return transport


async def test_an_idempotent_method_is_retried_when_unavailable() -> None:
    flaky = Flaky(served(Shelf()), failures=2)
    inventory = rpc.proxy(Inventory, flaky, "inventory", retry=FAST)
    assert await inventory.stock("apple") == 5
    assert flaky.attempts == 3


async def test_retries_stop_after_max_attempts_with_the_last_error() -> None:
    flaky = Flaky(served(Shelf()), failures=5, code="deadline_exceeded")
    inventory = rpc.proxy(Inventory, flaky, "inventory", retry=FAST)
    with pytest.raises(rpc.RemoteError, match="deadline_exceeded"):
        await inventory.stock("apple")
    assert flaky.attempts == 3


async def test_a_method_that_is_not_idempotent_is_never_retried() -> None:
    shelf = Shelf()
    flaky = Flaky(served(shelf), failures=1, after_delivery=True)
    inventory = rpc.proxy(Inventory, flaky, "inventory", retry=FAST)
    with pytest.raises(rpc.RemoteError, match="unavailable"):
        await inventory.reserve("apple")
    assert (flaky.attempts, shelf.reservations) == (1, 1)


async def test_other_errors_are_never_retried() -> None:
    flaky = Flaky(served(Shelf()), failures=1, code="internal")
    inventory = rpc.proxy(Inventory, flaky, "inventory", retry=FAST)
    with pytest.raises(rpc.RemoteError, match="internal"):
        await inventory.stock("apple")
    assert flaky.attempts == 1


async def test_a_keyed_call_is_retried_and_runs_once() -> None:
    shelf = Shelf()
    flaky = Flaky(served(shelf), failures=1, after_delivery=True)
    inventory = rpc.proxy(Inventory, flaky, "inventory", retry=FAST)
    with rpc.call_options(idempotency_key="order-1"):
        reservation = await inventory.reserve("apple", 2)
    assert (reservation.left, flaky.attempts, shelf.reservations) == (3, 2, 1)


async def test_a_key_repeated_later_gets_the_first_reply() -> None:
    shelf = Shelf()
    inventory = rpc.proxy(Inventory, served(shelf), "inventory")
    with rpc.call_options(idempotency_key="order-2"):
        first = await inventory.reserve("apple")
        again = await inventory.reserve("apple")
    assert first == again
    assert shelf.reservations == 1


async def test_a_keyed_failure_is_replayed_not_run_again() -> None:
    shelf = Shelf()
    inventory = rpc.proxy(Inventory, served(shelf), "inventory")
    for _ in range(2):
        with rpc.call_options(idempotency_key="order-3"), pytest.raises(rpc.RemoteError):
            await inventory.reserve("pear", 5)
    assert shelf.reservations == 1


async def test_a_key_reused_with_other_arguments_is_refused() -> None:
    inventory = rpc.proxy(Inventory, served(Shelf()), "inventory")
    with rpc.call_options(idempotency_key="order-4"):
        await inventory.reserve("apple")
        with pytest.raises(rpc.RemoteError, match="used before with other arguments"):
            await inventory.reserve("pear")


async def test_concurrent_duplicates_wait_for_the_first_run() -> None:
    shelf = Shelf()
    inventory = rpc.proxy(Inventory, served(shelf), "inventory")
    with rpc.call_options(idempotency_key="order-5"):
        replies = await asyncio.gather(*(inventory.reserve("apple") for _ in range(5)))
    assert len({reply.left for reply in replies}) == 1
    assert shelf.reservations == 1


async def test_a_key_whose_first_run_timed_out_is_not_run_again() -> None:
    shelf = Shelf()
    inventory = rpc.proxy(Inventory, served(shelf), "inventory", deadline=0.05, retry=ONCE)
    with rpc.call_options(idempotency_key="order-6"):
        with pytest.raises(rpc.RemoteError, match="deadline_exceeded"):
            await inventory.hang()
        assert shelf.cancelled.is_set()
        shelf.hanging.clear()
        with pytest.raises(rpc.RemoteError, match="the outcome is unknown") as raised:
            await inventory.hang()
    assert raised.value.code == "unavailable"
    assert not shelf.hanging.is_set()


class Waiter(Protocol):
    @rpc.idempotent
    async def wait(self) -> None: ...


class Waiting:
    def __init__(self) -> None:
        self.runs = 0

    async def wait(self) -> None:
        self.runs += 1
        await asyncio.Event().wait()


async def test_an_idempotent_key_whose_first_run_timed_out_runs_again() -> None:
    waiting = Waiting()
    transport = rpc.InProcessTransport()
    transport.register("waiter", rpc.serve(waiting, as_=Waiter))
    waiter = rpc.proxy(Waiter, transport, "waiter", deadline=0.05, retry=ONCE)
    with rpc.call_options(idempotency_key="wait-1"):
        for _ in range(2):
            with pytest.raises(rpc.RemoteError, match="deadline_exceeded"):
                await waiter.wait()
    assert waiting.runs == 2


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_a_server_that_is_down_is_unavailable_after_the_retries() -> None:
    async with rpc.HttpTransport(f"http://127.0.0.1:{unused_port()}") as transport:
        inventory = rpc.proxy(Inventory, transport, "inventory", retry=FAST)
        with pytest.raises(rpc.RemoteError) as raised:
            await inventory.stock("apple")
    assert raised.value.code == "unavailable"
    assert "cannot connect" in raised.value.message
