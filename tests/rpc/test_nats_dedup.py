"""Keyed calls de-duplicated across the replicas of a NATS-served service, in a JetStream
key-value bucket of the test's own (on the NATS server at ``BLOGE_TEST_NATS_URL``).

A "replica" here is a served implementation with its own NATS connection and its own view of
the bucket; calls reach each one directly (``dispatch``), not by the luck of queue-group load
balancing. The end-to-end tests go through real responders and a proxy's retries."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import nats
import pytest
from nats.aio.client import Client

from bloge import rpc
from bloge.rpc.calls import IDEMPOTENCY_KEY, dispatch
from bloge.rpc.jetstream import JetStreamReplies
from tests.rpc.conftest import NATS_URL, OwnNats, nats_or_skip
from tests.rpc.services import Inventory, Reservation, Shelf

LEASE = 0.3


class Gated(Shelf):
    """An implementation whose calls wait for ``release``, counting the runs."""

    def __init__(self, *, released: bool = False) -> None:
        super().__init__()
        self.runs = 0
        self.took_call = asyncio.Event()
        self.release = asyncio.Event()
        if released:
            self.release.set()

    async def _gate(self) -> None:
        self.runs += 1
        self.took_call.set()
        await self.release.wait()

    async def reserve(self, sku: str, quantity: int = 1) -> Reservation:
        await self._gate()
        return await super().reserve(sku, quantity)

    async def stock(self, sku: str) -> int:
        await self._gate()
        return await super().stock(sku)


@dataclass
class Replica:
    shelf: Gated
    handler: rpc.ServiceHandler
    client: Client
    replies: JetStreamReplies

    async def call(self, method: str, arguments: dict[str, object], key: str, *,
                   time_left: float = 30) -> str:
        return await dispatch(self.handler, "inventory", method, json.dumps(arguments),
                              time_left=time_left, metadata={IDEMPOTENCY_KEY: key},
                              replies=self.replies)

    async def die(self) -> None:
        """Lose the connection, as a crash would: nothing more reaches the bucket."""
        await self.client.close()


@pytest.fixture
async def bucket() -> AsyncIterator[str]:
    nats_or_skip()
    name = f"test_{uuid.uuid4().hex[:12]}"
    yield name
    client = await nats.connect(NATS_URL)
    with contextlib.suppress(nats.errors.Error):
        await client.jetstream().delete_key_value(name)
    await client.close()


@pytest.fixture
async def replicas(bucket: str) -> AsyncIterator[tuple[Replica, Replica]]:
    made: list[Replica] = []
    for released in (False, True):
        client = await nats.connect(NATS_URL)
        replies = await JetStreamReplies.open(client, bucket=bucket, ttl=60, lease=LEASE,
                                              namespace="test")
        shelf = Gated(released=released)
        made.append(Replica(shelf, rpc.serve(shelf, as_=Inventory), client, replies))
    yield made[0], made[1]
    for replica in made:
        if not replica.client.is_closed:
            await replica.client.close()


async def test_the_same_keyed_call_on_two_replicas_runs_once(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    running = asyncio.create_task(first.call("reserve", {"sku": "apple"}, "order-1"))
    await first.shelf.took_call.wait()
    waiting = asyncio.create_task(second.call("reserve", {"sku": "apple"}, "order-1"))
    first.shelf.release.set()
    replies = await asyncio.gather(running, waiting)
    assert replies[0] == replies[1]
    assert json.loads(replies[0])["left"] == 4
    assert await second.call("reserve", {"sku": "apple"}, "order-1") == replies[0]
    assert (first.shelf.runs, second.shelf.runs) == (1, 0)


async def test_a_keyed_failure_is_replayed_by_the_other_replica(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    first.shelf.release.set()
    for replica in (first, second):
        with pytest.raises(rpc.RemoteError) as raised:
            await replica.call("reserve", {"sku": "pear", "quantity": 5}, "order-2")
        assert raised.value.code == "invalid_argument"
        assert "only 1 pear left" in raised.value.message
    assert (first.shelf.runs, second.shelf.runs) == (1, 0)


async def test_a_key_reused_with_other_arguments_on_another_replica_is_refused(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    first.shelf.release.set()
    await first.call("reserve", {"sku": "apple"}, "order-3")
    with pytest.raises(rpc.RemoteError, match="used before with other arguments"):
        await second.call("reserve", {"sku": "pear"}, "order-3")
    assert second.shelf.runs == 0


async def test_a_replica_dead_mid_call_leaves_its_outcome_unknown(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    running = asyncio.create_task(first.call("reserve", {"sku": "apple"}, "order-4"))
    await first.shelf.took_call.wait()
    await first.die()
    for _ in range(2):  # the retries after it: answered at once, never run
        with pytest.raises(rpc.RemoteError) as raised:
            await second.call("reserve", {"sku": "apple"}, "order-4")
        assert raised.value.code == "unavailable"
        assert "the outcome is unknown" in raised.value.message
    assert second.shelf.runs == 0
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, rpc.RemoteError):
        await running


async def test_retries_shorter_than_the_lease_settle_a_dead_replicas_call_as_unknown(
        replicas: tuple[Replica, Replica]) -> None:
    """Each retry waits for what is left of the dead owner's lease, not for a lease of its
    own: one of them, at the latest one lease after the last renewal, hears the truth."""
    first, second = replicas
    running = asyncio.create_task(first.call("reserve", {"sku": "apple"}, "order-13"))
    await first.shelf.took_call.wait()
    await first.die()
    codes = []
    for _ in range(100):  # 100 deadlines of a third of the lease: 33 leases
        with pytest.raises(rpc.RemoteError) as raised:
            await second.call("reserve", {"sku": "apple"}, "order-13", time_left=LEASE / 3)
        codes.append(raised.value.code)
        if raised.value.code != "deadline_exceeded":
            break
    assert codes[-1] == "unavailable"
    assert "the outcome is unknown" in raised.value.message
    assert second.shelf.runs == 0
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, rpc.RemoteError):
        await running


async def test_a_keyed_call_stopped_by_its_deadline_is_not_run_again_elsewhere(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    with pytest.raises(rpc.RemoteError, match="deadline_exceeded"):
        await first.call("hang", {}, "hang-1", time_left=0.05)
    assert first.shelf.cancelled.is_set()
    with pytest.raises(rpc.RemoteError, match="the outcome is unknown"):
        await second.call("hang", {}, "hang-1")
    assert not second.shelf.hanging.is_set()


async def test_an_idempotent_call_whose_replica_died_is_run_again(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    running = asyncio.create_task(first.call("stock", {"sku": "apple"}, "count-1"))
    await first.shelf.took_call.wait()
    await first.die()
    assert await second.call("stock", {"sku": "apple"}, "count-1") == "5"
    assert second.shelf.runs == 1
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, rpc.RemoteError):
        await running


async def test_a_renewal_whose_acknowledgement_was_lost_keeps_the_claim(
        bucket: str, replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas
    running = asyncio.create_task(first.call("reserve", {"sku": "apple"}, "order-12"))
    await first.shelf.took_call.wait()
    # The claim's revision moves on behind the replica's back, as when a renewal reached the
    # server and its acknowledgement did not reach the replica.
    kv = await first.client.jetstream().key_value(bucket)
    name = f"test.inventory.reserve.{hashlib.sha256(b'order-12').hexdigest()}"
    entry = await kv.get(name)
    assert entry.value is not None
    assert entry.revision is not None
    await kv.update(name, entry.value, last=entry.revision)
    first.shelf.release.set()
    reply = await running
    assert await second.call("reserve", {"sku": "apple"}, "order-12") == reply
    assert second.shelf.runs == 0


async def test_a_handler_that_says_unavailable_releases_the_key(
        replicas: tuple[Replica, Replica]) -> None:
    first, second = replicas

    class Down(Gated):
        async def reserve(self, sku: str, quantity: int = 1) -> Reservation:
            self.runs += 1
            raise rpc.RemoteError("unavailable", "the warehouse is down")

    down = Down()
    first.handler = rpc.serve(down, as_=Inventory)
    with pytest.raises(rpc.RemoteError, match="the warehouse is down"):
        await first.call("reserve", {"sku": "apple"}, "order-5")
    reply = await second.call("reserve", {"sku": "apple"}, "order-5")
    assert json.loads(reply)["left"] == 4
    assert (down.runs, second.shelf.runs) == (1, 1)


async def test_a_reply_too_large_to_store_leaves_the_outcome_unknown(bucket: str) -> None:
    client = await nats.connect(NATS_URL)
    await client.jetstream().create_key_value(bucket=bucket, history=1, ttl=60,
                                              max_value_size=512)
    replies = await JetStreamReplies.open(client, bucket=bucket, ttl=60, lease=60,
                                          namespace="test")
    shelf = Gated(released=True)
    replica = Replica(shelf, rpc.serve(shelf, as_=Inventory), client, replies)
    try:
        big = "x" * 1000
        assert json.loads(await replica.call("echo", {"value": big}, "echo-1")) == big
        with pytest.raises(rpc.RemoteError, match="the outcome is unknown"):
            await replica.call("echo", {"value": big}, "echo-1")
    finally:
        await client.close()


@pytest.fixture
def prefix() -> str:
    return f"test{uuid.uuid4().hex[:12]}"


RETRY = rpc.Retry(max_attempts=3, initial_backoff=0.01, max_backoff=0.05)


async def killed_mid_call(prefix: str, bucket: str, method: str) -> tuple[Gated, Gated, object]:
    """Replica 1 takes the keyed call and is killed; the proxy's retry reaches replica 2
    (the only one left) once the first attempt timed out: what it answered, and both shelves."""
    dying, healthy = Gated(), Gated(released=True)
    options = {"subject_prefix": prefix, "replies_bucket": bucket, "replies_ttl": 60,
               "claim_lease": LEASE}
    first = rpc.NatsResponder({"inventory": rpc.serve(dying, as_=Inventory)}, NATS_URL,
                              **options)
    await first.start()
    transport = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
    inventory = rpc.proxy(Inventory, transport, "inventory", deadline=2.0, retry=RETRY)

    async def keyed() -> object:
        with rpc.call_options(idempotency_key="order-9"):
            return await getattr(inventory, method)("apple")

    try:
        call = asyncio.create_task(keyed())
        await dying.took_call.wait()
        async with rpc.NatsResponder({"inventory": rpc.serve(healthy, as_=Inventory)},
                                     NATS_URL, **options):
            await first.kill()
            outcome = await asyncio.gather(call, return_exceptions=True)
    finally:
        await transport.aclose()
    return dying, healthy, outcome[0]


async def test_over_nats_the_retry_of_a_killed_replica_call_is_not_run_again(
        prefix: str, bucket: str) -> None:
    dying, healthy, outcome = await killed_mid_call(prefix, bucket, "reserve")
    assert isinstance(outcome, rpc.RemoteError)
    assert outcome.code == "unavailable"
    assert "the outcome is unknown" in outcome.message
    assert (dying.runs, healthy.runs) == (1, 0)


async def test_over_nats_the_retry_of_a_killed_replica_idempotent_call_runs_again(
        prefix: str, bucket: str) -> None:
    dying, healthy, outcome = await killed_mid_call(prefix, bucket, "stock")
    assert outcome == 5
    assert (dying.runs, healthy.runs) == (1, 1)


async def test_responders_share_the_replies_of_keyed_calls(prefix: str, bucket: str) -> None:
    shelves = [Gated(released=True), Gated(released=True)]
    async with contextlib.AsyncExitStack() as stack:
        for shelf in shelves:
            responder = await stack.enter_async_context(rpc.NatsResponder(
                {"inventory": rpc.serve(shelf, as_=Inventory)}, NATS_URL,
                subject_prefix=prefix, replies_bucket=bucket, replies_ttl=60))
            assert responder.dedup.startswith(f"across replicas, in the JetStream bucket {bucket}")
        transport = rpc.NatsTransport(NATS_URL, subject_prefix=prefix)
        stack.push_async_callback(transport.aclose)
        inventory = rpc.proxy(Inventory, transport, "inventory")
        with rpc.call_options(idempotency_key="order-10"):
            replies = await asyncio.gather(*(inventory.reserve("apple") for _ in range(20)))
    assert {reply.left for reply in replies} == {4}
    assert sum(shelf.runs for shelf in shelves) == 1


async def test_without_jetstream_keyed_calls_are_de_duplicated_per_process_and_it_says_so(
        own_nats: OwnNats, caplog: pytest.LogCaptureFixture) -> None:
    shelf = Gated(released=True)
    caplog.set_level(logging.WARNING, logger="bloge.rpc")
    async with rpc.NatsResponder({"inventory": rpc.serve(shelf, as_=Inventory)},
                                 own_nats.url) as responder:
        transport = rpc.NatsTransport(own_nats.url)
        inventory = rpc.proxy(Inventory, transport, "inventory")
        with rpc.call_options(idempotency_key="order-11"):
            first, again = await inventory.reserve("apple"), await inventory.reserve("apple")
        await transport.aclose()
    assert responder.dedup.startswith("per process: JetStream is not available")
    assert "a retry that reaches another replica runs again" in caplog.text
    assert (first, shelf.runs) == (again, 1)
