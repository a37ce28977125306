"""The business suite: what code written against an interface sees, whichever transport
carries its calls (each test runs over in-process, HTTP and NATS)."""

from __future__ import annotations

import asyncio
import math

import pytest

from bloge import BlogeError, BlogeUsageError, rpc
from tests.rpc.conftest import Link
from tests.rpc.services import Inventory, Item, Reservation, Shelf


@pytest.fixture
async def shelf() -> Shelf:
    return Shelf()


@pytest.fixture
async def inventory(link: Link, shelf: Shelf) -> Inventory:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    return rpc.proxy(Inventory, transport, "inventory")


async def test_a_proxy_implements_the_interface(inventory: Inventory) -> None:
    assert isinstance(inventory, Inventory)


async def test_arguments_and_results_arrive_typed(inventory: Inventory) -> None:
    reservation = await inventory.reserve("apple", quantity=2)
    assert reservation == Reservation(sku="apple", quantity=2, left=3)
    assert await inventory.stock("apple") == 3


async def test_defaults_and_optional_parameters_travel(inventory: Inventory) -> None:
    assert (await inventory.reserve("pear")).left == 0
    assert await inventory.items() == [Item("apple", ("fruit",)), Item("pear", ("fruit",))]
    assert await inventory.items(tag="veg") == []


async def test_json_values_round_trip(inventory: Inventory) -> None:
    value = {"a": [1, 2.5, None, True], "é": "ü"}
    assert await inventory.echo(value) == value


async def test_a_remote_error_keeps_its_code_message_and_details(inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.stock("plum")
    assert (raised.value.code, raised.value.message, raised.value.details) == (
        "not_found", "no item 'plum'", {"sku": "plum"})
    assert isinstance(raised.value, BlogeError)


async def test_a_value_error_is_an_invalid_argument_with_its_message(
        inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.reserve("pear", quantity=9)
    assert raised.value.code == "invalid_argument"
    assert raised.value.message == "inventory.reserve: only 1 pear left"


async def test_a_wrong_argument_names_the_method_and_the_field(inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.reserve("apple", quantity="many")  # type: ignore[arg-type]  # the mistake under test
    assert raised.value.code == "invalid_argument"
    assert "inventory.reserve" in raised.value.message
    assert "'quantity'" in raised.value.message
    assert raised.value.details["errors"][0]["field"] == "quantity"


async def test_a_missing_argument_is_refused_before_it_is_sent(
        inventory: Inventory, shelf: Shelf) -> None:
    with pytest.raises(rpc.RemoteError, match=r"inventory\.reserve: argument 'sku': Field required"):
        await inventory.reserve()  # type: ignore[call-arg]  # the mistake under test
    assert shelf.reservations == 0


async def test_an_argument_that_is_not_json_fails_on_every_transport(
        inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.echo(object())
    assert raised.value.code == "invalid_argument"
    assert "cannot be sent as JSON" in raised.value.message


async def test_a_failing_implementation_sends_back_no_traceback_and_no_secret(
        inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.explode("secret")
    error = raised.value
    assert error.code == "internal"
    assert error.message == ("inventory.explode failed (RuntimeError); the service's log has "
                             "the details")
    assert "hunter2" not in error.to_json()
    assert "Traceback" not in error.to_json()


async def test_metadata_reaches_the_implementation(link: Link, shelf: Shelf) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    inventory = rpc.proxy(Inventory, transport, "inventory", metadata={"tenant": "acme"})
    with rpc.call_options(metadata={"traceparent": "00-abc-def-01"}):
        seen = await inventory.whoami()
    assert seen["tenant"] == "acme"
    assert seen["traceparent"] == "00-abc-def-01"


async def test_a_passing_deadline_stops_the_work_and_fails_the_call(
        link: Link, shelf: Shelf) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    inventory = rpc.proxy(Inventory, transport, "inventory", deadline=0.2)
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.hang()
    assert raised.value.code == "deadline_exceeded"
    assert await asyncio.to_thread(shelf.cancelled.wait, 10)


@pytest.mark.parametrize("deadline", [math.inf, 1e300])
async def test_a_deadline_longer_than_a_call_can_carry_is_sent_as_the_longest(
        link: Link, shelf: Shelf, deadline: float) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    inventory = rpc.proxy(Inventory, transport, "inventory", deadline=deadline)
    assert await inventory.stock("apple") == 5


@pytest.mark.parametrize("deadline", [0, -1, math.nan, "5", True])
def test_a_deadline_that_is_not_seconds_more_than_0_is_a_usage_error(deadline: object) -> None:
    with pytest.raises(BlogeUsageError, match="the proxy of inventory: deadline must be a "
                                              "number of seconds more than 0"):
        rpc.proxy(Inventory, rpc.InProcessTransport(), "inventory",
                  deadline=deadline)  # type: ignore[arg-type]  # the mistake under test
    with pytest.raises(BlogeUsageError, match=r"call_options\(\): deadline must be"), \
            rpc.call_options(deadline=deadline):  # type: ignore[arg-type]  # the mistake
        pass


async def test_an_unknown_method_is_not_found(link: Link, shelf: Shelf) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    with pytest.raises(rpc.RemoteError) as raised:
        await transport.send("inventory", "steal", "{}")
    assert raised.value.code == "not_found"
    assert "inventory.steal: no such method" in raised.value.message


async def test_an_unknown_service_is_not_found_or_unavailable(link: Link, shelf: Shelf,
                                                              transport_kind: str) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    with pytest.raises(rpc.RemoteError) as raised:
        await rpc.proxy(Inventory, transport, "warehouse").stock("apple")
    # Over NATS nobody listens on the subject: the call cannot have run.
    assert raised.value.code == ("unavailable" if transport_kind == "nats" else "not_found")


async def test_a_payload_over_the_limit_is_resource_exhausted(inventory: Inventory) -> None:
    with pytest.raises(rpc.RemoteError) as raised:
        await inventory.echo("x" * 10_000_000)
    assert raised.value.code == "resource_exhausted"


async def test_a_payload_that_is_not_json_is_an_invalid_argument(
        link: Link, shelf: Shelf) -> None:
    transport = await link({"inventory": rpc.serve(shelf, as_=Inventory)})
    with pytest.raises(rpc.RemoteError) as raised:
        await transport.send("inventory", "stock", "{sku: apple")
    assert raised.value.code == "invalid_argument"


async def test_concurrent_calls_each_get_their_own_reply(inventory: Inventory) -> None:
    values = await asyncio.gather(*(inventory.echo(n) for n in range(50)))
    assert values == list(range(50))
