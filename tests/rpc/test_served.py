"""Services mounted by ``bloge serve`` at ``POST /rpc/{service}/{method}``, behind its guard."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from bloge import rpc
from bloge.server import ServedAgents, ServerConfig, create_app
from bloge.store import Store, open_store
from tests.rpc.services import Inventory, Shelf
from tests.server.live_server import LiveServer

KEY = "rpc-test-key-123"


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    opened = open_store("memory://")
    yield opened
    await opened.aclose()


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    app = create_app(ServedAgents({}, lambda definition: definition), store=store,
                     config=ServerConfig(api_keys=(KEY,), max_body_bytes=64 * 1024),
                     rpc={"inventory": rpc.serve(Shelf(), as_=Inventory)})
    with LiveServer(app) as live:
        yield live


async def test_a_call_with_the_servers_key_is_answered(server: LiveServer) -> None:
    async with rpc.HttpTransport(server.url(), api_key=KEY) as transport:
        assert await rpc.proxy(Inventory, transport, "inventory").stock("apple") == 5


async def test_a_call_without_a_key_is_unauthenticated(server: LiveServer) -> None:
    async with rpc.HttpTransport(server.url()) as transport:
        with pytest.raises(rpc.RemoteError) as raised:
            await rpc.proxy(Inventory, transport, "inventory").stock("apple")
    assert raised.value.code == "unauthenticated"
    assert "API key" in raised.value.message


async def test_a_call_with_a_wrong_key_is_unauthenticated(server: LiveServer) -> None:
    async with rpc.HttpTransport(server.url(), api_key="nope") as transport:
        with pytest.raises(rpc.RemoteError, match="unauthenticated"):
            await rpc.proxy(Inventory, transport, "inventory").stock("apple")


async def test_a_body_over_the_servers_limit_is_resource_exhausted(server: LiveServer) -> None:
    async with rpc.HttpTransport(server.url(), api_key=KEY) as transport:
        with pytest.raises(rpc.RemoteError) as raised:
            await rpc.proxy(Inventory, transport, "inventory").echo("x" * 100_000)
    assert raised.value.code == "resource_exhausted"


async def test_errors_have_the_documented_status_and_body(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url()) as client:
        response = await client.post("/rpc/inventory/stock", content='{"sku": "plum"}',
                                     headers={"authorization": f"Bearer {KEY}"})
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": "no item 'plum'",
                               "details": {"sku": "plum"}}


async def test_an_unknown_service_is_a_404(server: LiveServer) -> None:
    async with rpc.HttpTransport(server.url(), api_key=KEY) as transport:
        with pytest.raises(rpc.RemoteError) as raised:
            await transport.send("warehouse", "stock", "{}")
    assert raised.value.code == "not_found"
    assert raised.value.message == "no service 'warehouse' is served here"


async def test_a_bad_deadline_header_is_an_invalid_argument(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url()) as client:
        response = await client.post("/rpc/inventory/stock", content='{"sku": "apple"}',
                                     headers={"authorization": f"Bearer {KEY}",
                                              "bloge-timeout-ms": "soon"})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"


@pytest.mark.parametrize(("headers", "content", "status", "code"), [
    ({}, '{"sku": "apple"}', 401, "unauthenticated"),
    ({"authorization": "Bearer nope"}, '{"sku": "apple"}', 401, "unauthenticated"),
    ({"authorization": f"Bearer {KEY}", "host": "rebound.example"}, '{"sku": "apple"}', 400,
     "invalid_argument"),
    ({"authorization": f"Bearer {KEY}", "origin": "https://attacker.example"},
     '{"sku": "apple"}', 403, "permission_denied"),
    ({"authorization": f"Bearer {KEY}"}, '{"sku": "' + "x" * 100_000 + '"}', 413,
     "resource_exhausted")])
async def test_the_guards_refusals_have_the_rpc_body_too(
        server: LiveServer, headers: dict[str, str], content: str, status: int,
        code: str) -> None:
    async with httpx.AsyncClient(base_url=server.url()) as client:
        response = await client.post("/rpc/inventory/stock", content=content, headers=headers)
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"code", "message", "details"}, body
    assert body["code"] == code
    assert body["details"] == {}


async def test_the_guards_refusals_elsewhere_keep_the_openai_body(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url()) as client:
        response = await client.get("/agents")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
