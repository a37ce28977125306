"""NATS specifics: replicas in a queue group share the calls, one can die without failing
calls, and a NATS server restart in the middle of a stream of calls loses none silently."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from bloge import rpc
from tests.rpc.conftest import NATS_URL, OwnNats, nats_or_skip
from tests.rpc.services import Inventory, Reservation, Shelf

RETRY = rpc.Retry(max_attempts=6, initial_backoff=0.05, max_backoff=0.5)


@pytest.fixture
def prefix() -> str:
    return f"test{uuid.uuid4().hex[:12]}"


class Counting(Shelf):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def stock(self, sku: str) -> int:
        self.calls += 1
        return await super().stock(sku)


async def test_replicas_in_the_queue_group_share_the_calls(prefix: str) -> None:
    nats_or_skip()
    shelves = [Counting(), Counting()]
    async with contextlib.AsyncExitStack() as stack:
        for shelf in shelves:
            await stack.enter_async_context(rpc.NatsResponder(
                {"inventory": rpc.serve(shelf, as_=Inventory)}, NATS_URL, subject_prefix=prefix))
        transport = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
        stack.push_async_callback(transport.aclose)
        inventory = rpc.proxy(Inventory, transport, "inventory")
        await asyncio.gather(*(inventory.stock("apple") for _ in range(60)))
    assert sum(s.calls for s in shelves) == 60
    assert all(s.calls > 0 for s in shelves)


class Stuck(Shelf):
    """A replica that takes a call and dies before answering it."""

    def __init__(self) -> None:
        super().__init__()
        self.took_call = asyncio.Event()

    async def stock(self, sku: str) -> int:
        self.took_call.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_replica_that_dies_mid_call_fails_no_idempotent_call(prefix: str) -> None:
    nats_or_skip()
    stuck, healthy = Stuck(), Shelf()
    dying = rpc.NatsResponder({"inventory": rpc.serve(stuck, as_=Inventory)}, NATS_URL,
                              subject_prefix=prefix)
    await dying.start()
    transport = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
    inventory = rpc.proxy(Inventory, transport, "inventory", deadline=0.5, retry=RETRY)
    try:
        call = asyncio.create_task(inventory.stock("apple"))
        await stuck.took_call.wait()
        async with rpc.NatsResponder({"inventory": rpc.serve(healthy, as_=Inventory)},
                                     NATS_URL, subject_prefix=prefix):
            await dying.kill()
            assert await call == 5
            assert await inventory.stock("pear") == 1
    finally:
        await transport.aclose()


@dataclass
class Restarting:
    server: OwnNats
    shelf: Shelf
    transport: rpc.Transport
    reconnected: tuple[asyncio.Event, asyncio.Event]

    async def restart(self) -> None:
        """Stop the NATS server and start it again; return once both sides reconnected."""
        for event in self.reconnected:
            event.clear()
        self.server.stop()
        self.server.start()
        await asyncio.gather(*(event.wait() for event in self.reconnected))


@pytest.fixture
async def restarting(own_nats: OwnNats) -> AsyncIterator[Restarting]:
    shelf = Shelf(counts={"apple": 10_000})
    events = (asyncio.Event(), asyncio.Event())

    def options(event: asyncio.Event) -> dict[str, object]:
        async def reconnected() -> None:
            event.set()

        return {"reconnect_time_wait": 0.05, "reconnected_cb": reconnected}

    async with rpc.NatsResponder({"inventory": rpc.serve(shelf, as_=Inventory)},
                                 own_nats.url, **options(events[0])):
        transport = rpc.NatsTransport(own_nats.url, **options(events[1]))
        yield Restarting(own_nats, shelf, transport, events)
        await transport.aclose()


async def test_a_server_restart_fails_no_idempotent_call(restarting: Restarting) -> None:
    inventory = rpc.proxy(Inventory, restarting.transport, "inventory", deadline=1.0,
                          retry=RETRY)
    assert await inventory.stock("apple") == 10_000
    in_flight = [asyncio.create_task(inventory.stock("apple")) for _ in range(20)]
    await restarting.restart()
    after = [asyncio.create_task(inventory.stock("apple")) for _ in range(20)]
    assert await asyncio.gather(*in_flight, *after) == [10_000] * 40


async def test_a_server_restart_runs_no_call_twice_and_loses_none_silently(
        restarting: Restarting) -> None:
    inventory = rpc.proxy(Inventory, restarting.transport, "inventory", deadline=1.0,
                          retry=RETRY)
    await inventory.reserve("apple")
    in_flight = [asyncio.create_task(inventory.reserve("apple")) for _ in range(20)]
    await restarting.restart()
    outcomes = await asyncio.gather(*in_flight, return_exceptions=True)
    succeeded = [o for o in outcomes if isinstance(o, Reservation)]
    failed = [o for o in outcomes if isinstance(o, rpc.RemoteError)]
    assert len(succeeded) + len(failed) == 20
    assert all(f.code in ("unavailable", "deadline_exceeded") for f in failed)
    ran = restarting.shelf.reservations - 1
    assert len(succeeded) <= ran <= 20
    after = await asyncio.gather(*(inventory.reserve("apple") for _ in range(20)))
    assert len(after) == 20
    assert restarting.shelf.reservations == 1 + ran + 20


async def test_keyed_calls_survive_a_server_restart_and_run_once(
        restarting: Restarting) -> None:
    inventory = rpc.proxy(Inventory, restarting.transport, "inventory", deadline=1.0,
                          retry=RETRY)
    await inventory.reserve("apple")

    async def keyed(n: int) -> Reservation:
        with rpc.call_options(idempotency_key=f"order-{n}"):
            return await inventory.reserve("apple")

    in_flight = [asyncio.create_task(keyed(n)) for n in range(20)]
    await restarting.restart()
    assert len(await asyncio.gather(*in_flight)) == 20
    assert restarting.shelf.reservations == 21


async def test_a_refused_connection_says_what_the_nats_server_said(
        own_nats: OwnNats) -> None:
    own_nats.stop()
    guarded = OwnNats(own_nats.port, options=("--user", "bob", "--pass", "right-pw-123"))
    guarded.start()
    try:
        transport = rpc.NatsTransport(f"nats://bob:wrong-pw-456@127.0.0.1:{guarded.port}",
                                      connect_timeout=1)
        with pytest.raises(rpc.RemoteError) as raised:
            await rpc.proxy(Inventory, transport, "inventory").stock("apple")
        await transport.aclose()
    finally:
        guarded.stop()
    assert raised.value.code == "unavailable"
    assert "Authorization Violation" in raised.value.message
    assert f"nats://bob:****@127.0.0.1:{guarded.port}" in raised.value.message
    assert "wrong-pw-456" not in raised.value.message


async def test_a_nats_server_that_is_down_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    transport = rpc.NatsTransport(f"nats://127.0.0.1:{port}", connect_timeout=0.5)
    with pytest.raises(rpc.RemoteError) as raised:
        await rpc.proxy(Inventory, transport, "inventory").stock("apple")
    assert raised.value.code == "unavailable"
    assert f"cannot connect to NATS at nats://127.0.0.1:{port}" in raised.value.message
    assert "ConnectionRefusedError" in raised.value.message
    await transport.aclose()


class Leaving(Shelf):
    """A replica whose calls wait until the test lets them finish."""

    def __init__(self) -> None:
        super().__init__(counts={"apple": 1000})
        self.took_call = asyncio.Event()
        self.finish = asyncio.Event()

    async def reserve(self, sku: str, quantity: int = 1) -> Reservation:
        self.took_call.set()
        await self.finish.wait()
        return await super().reserve(sku, quantity)


async def test_a_replica_that_stops_answers_the_calls_it_has_first(prefix: str) -> None:
    nats_or_skip()
    leaving, staying = Leaving(), Shelf(counts={"apple": 1000})
    first = rpc.NatsResponder({"inventory": rpc.serve(leaving, as_=Inventory)}, NATS_URL,
                              subject_prefix=prefix)
    await first.start()
    transport = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
    inventory = rpc.proxy(Inventory, transport, "inventory", deadline=5)
    try:
        async with rpc.NatsResponder({"inventory": rpc.serve(staying, as_=Inventory)},
                                     NATS_URL, subject_prefix=prefix):
            calls = [asyncio.create_task(inventory.reserve("apple")) for _ in range(50)]
            await leaving.took_call.wait()
            stopping = asyncio.create_task(first.stop())
            later = [asyncio.create_task(inventory.reserve("apple")) for _ in range(50)]
            leaving.finish.set()
            replies = await asyncio.gather(*calls, *later)
            await stopping
    finally:
        await transport.aclose()
    assert len(replies) == 100
    assert leaving.reservations > 0
    assert leaving.reservations + staying.reservations == 100
