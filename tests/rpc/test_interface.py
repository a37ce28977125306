"""Interfaces and implementations are checked when they meet, not on the first call."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator
from typing import Protocol

import pytest

from bloge import BlogeUsageError, rpc
from tests.rpc.services import Inventory, Shelf


class Greeter(Protocol):
    async def greet(self, name: str, *, loud: bool = False) -> str: ...


class Polite:
    async def greet(self, name: str, *, loud: bool = False) -> str:
        return f"Hello, {name}{'!' if loud else '.'}"


def test_an_implementation_missing_a_method_is_refused() -> None:
    class Mute:
        pass

    with pytest.raises(BlogeUsageError, match="Mute does not implement Greeter: it has no "
                                              "method 'greet'"):
        rpc.serve(Mute(), as_=Greeter)


def test_an_implementation_with_other_parameters_is_refused() -> None:
    class Rude:
        async def greet(self, who: str, *, loud: bool = False) -> str:
            return who

    with pytest.raises(BlogeUsageError, match=r"Rude.greet takes \(who, loud\) but "
                                              r"Greeter.greet declares \(name, loud\)"):
        rpc.serve(Rude(), as_=Greeter)


def test_an_implementation_with_other_types_is_refused() -> None:
    class Counting:
        async def greet(self, name: int, *, loud: bool = False) -> str:
            return str(name)

    with pytest.raises(BlogeUsageError, match=r"Counting\.greet: name is <class 'int'> but "
                                              r"Greeter\.greet declares <class 'str'>"):
        rpc.serve(Counting(), as_=Greeter)


def test_an_interface_method_must_be_async() -> None:
    class Blocking(Protocol):
        def greet(self, name: str) -> str: ...

    with pytest.raises(BlogeUsageError, match=r"Blocking\.greet must be 'async def'"):
        rpc.proxy(Blocking, rpc.InProcessTransport())


def test_an_interface_method_may_not_take_star_args() -> None:
    class Loose(Protocol):
        async def greet(self, *names: str) -> str: ...

    with pytest.raises(BlogeUsageError, match=r"Loose.greet: \*names cannot be sent"):
        rpc.proxy(Loose, rpc.InProcessTransport())


def test_an_interface_whose_types_are_not_json_is_refused() -> None:
    class Sockets(Protocol):
        async def open(self, loop: asyncio.AbstractEventLoop) -> None: ...

    with pytest.raises(BlogeUsageError, match=r"Sockets\.open: its types cannot"):
        rpc.proxy(Sockets, rpc.InProcessTransport())


async def test_keyword_only_parameters_travel_by_name() -> None:
    transport = rpc.InProcessTransport()
    transport.register("greeter", rpc.serve(Polite(), as_=Greeter))
    greeter = rpc.proxy(Greeter, transport, "greeter")
    assert await greeter.greet("Ada", loud=True) == "Hello, Ada!"


async def test_the_service_name_defaults_to_the_interfaces() -> None:
    transport = rpc.InProcessTransport()
    transport.register("Greeter", rpc.serve(Polite(), as_=Greeter))
    assert await rpc.proxy(Greeter, transport).greet("Bo") == "Hello, Bo."


async def test_a_result_that_does_not_fit_its_type_is_internal() -> None:
    class Liar(Shelf):
        async def stock(self, sku: str) -> int:
            return "plenty"  # type: ignore[return-value]  # the bug under test

    transport = rpc.InProcessTransport()
    transport.register("inventory", rpc.serve(Liar(), as_=Inventory))
    with pytest.raises(rpc.RemoteError) as raised:
        await rpc.proxy(Inventory, transport, "inventory").stock("apple")
    assert raised.value.code == "internal"
    assert "does not fit its declared type" in raised.value.message


async def test_a_reply_that_does_not_fit_the_callers_type_is_internal() -> None:
    async def handler(method: str, payload: str) -> str:
        return '"plenty"'

    transport = rpc.InProcessTransport()
    transport.register("inventory", handler)
    with pytest.raises(rpc.RemoteError, match="the reply does not fit the declared result"):
        await rpc.proxy(Inventory, transport, "inventory").stock("apple")


async def test_a_sync_handler_runs_off_the_event_loop() -> None:
    def handler(method: str, payload: str) -> str:
        return payload

    transport = rpc.InProcessTransport()
    transport.register("echo", handler)
    assert await transport.send("echo", "any", '{"a": 1}') == '{"a": 1}'


async def test_a_second_service_under_a_registered_name_is_refused() -> None:
    transport = rpc.InProcessTransport()
    transport.register("echo", lambda method, payload: '"first"')
    with pytest.raises(BlogeUsageError,
                       match="a service is already registered under 'echo' on this "
                             "InProcessTransport; register each service once, or pass "
                             "replace=True to swap its handler"):
        transport.register("echo", lambda method, payload: '"second"')
    assert await transport.send("echo", "any", "{}") == '"first"'


async def test_replace_swaps_a_registered_services_handler() -> None:
    transport = rpc.InProcessTransport()
    transport.register("echo", lambda method, payload: '"first"')
    transport.register("echo", lambda method, payload: '"second"', replace=True)
    assert await transport.send("echo", "any", "{}") == '"second"'
    assert transport.services == ("echo",)


async def test_a_handler_returning_something_else_than_text_is_internal() -> None:
    async def handler(method: str, payload: str) -> str:
        return {"a": 1}  # type: ignore[return-value]  # the bug under test

    transport = rpc.InProcessTransport()
    transport.register("echo", handler)
    with pytest.raises(rpc.RemoteError, match=r"echo.any failed \(TypeError\)"):
        await transport.send("echo", "any", "{}")


@pytest.fixture
async def dropping() -> AsyncIterator[tuple[str, asyncio.Event]]:
    """An HTTP "server" that reads a request and then closes the connection or hangs."""
    got = asyncio.Event()

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        got.set()
        writer.close()

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", got


async def test_a_connection_dropped_mid_call_is_unavailable_and_not_retried(
        dropping: tuple[str, asyncio.Event]) -> None:
    url, got = dropping
    async with rpc.HttpTransport(url) as transport:
        with pytest.raises(rpc.RemoteError) as raised:
            await rpc.proxy(Inventory, transport, "inventory").reserve("apple")
    assert got.is_set()
    assert raised.value.code == "unavailable"
    assert "the outcome is unknown" in raised.value.message


async def test_metadata_that_cannot_be_a_header_is_refused() -> None:
    transport = rpc.InProcessTransport()
    transport.register("inventory", rpc.serve(Shelf(), as_=Inventory))
    with pytest.raises(rpc.RemoteError, match="metadata name 'Content-Length' cannot be sent"):
        await transport.send("inventory", "stock", '{"sku": "apple"}',
                             metadata={"Content-Length": "1"})


def test_a_remote_error_pickles_with_its_fields() -> None:
    error = rpc.RemoteError("not_found", "gone", {"id": 1})
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 -- our own bytes, just made
    assert (copy.code, copy.message, copy.details) == ("not_found", "gone", {"id": 1})


class Front(Protocol):
    async def lookup(self) -> None: ...


async def test_a_call_made_while_serving_one_gets_only_the_time_left() -> None:
    shelf = Shelf()
    backend = rpc.InProcessTransport()
    backend.register("inventory", rpc.serve(shelf, as_=Inventory))
    inventory = rpc.proxy(Inventory, backend, "inventory")  # no deadline of its own

    class Forwarding:
        async def lookup(self) -> None:
            await inventory.hang()

    front = rpc.InProcessTransport()
    front.register("front", rpc.serve(Forwarding(), as_=Front))
    with pytest.raises(rpc.RemoteError, match="deadline_exceeded"):
        await rpc.proxy(Front, front, "front", deadline=0.1).lookup()
    assert shelf.cancelled.is_set()


@pytest.mark.parametrize("name", ["billing.v2", "", "kb search", "ünï"])
def test_a_service_name_no_other_transport_could_serve_is_refused(name: str) -> None:
    transport = rpc.InProcessTransport()
    with pytest.raises(BlogeUsageError, match=r"cannot name a service: use letters, digits"):
        transport.register(name, lambda method, payload: "{}")
    assert transport.services == ()
