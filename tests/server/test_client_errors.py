"""What a client is told when a run, a thread or the store is not there: ids and a reason,
never where the store is (a file's path, a database's user, host or password); the server's
log names the store."""

from __future__ import annotations

import asyncio
import logging
import threading

import httpx
import pytest

from bloge.llm import ScriptedProvider
from bloge.server import ServerConfig
from bloge.store import open_store
from tests.server.conftest import Serve, served_app
from tests.server.live_server import LiveServer


@pytest.mark.parametrize(("path", "message"), [("/runs/nosuch", "no run 'nosuch'"),
                                                ("/threads/nosuch", "no thread 'nosuch'")])
def test_a_404_names_the_id_and_not_the_store(serve: Serve, path: str, message: str) -> None:
    # Before, the message began with the store: the SQLite file's absolute path.
    served = serve(ScriptedProvider("Hi."))
    missing = httpx.get(served.url(path))
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == message
    assert "sqlite" not in missing.text


def test_a_store_that_is_down_is_a_503_without_its_address_or_password(
        caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("psycopg", reason="a PostgreSQL store needs the extra: pip install "
                        "'bloge[postgres]'")
    password = "pa?ss/w#rd"
    store = open_store(f"postgresql://bob:{password}@127.0.0.1:1/shop")
    app = served_app(ScriptedProvider("Hi."), store, ServerConfig())
    with caplog.at_level(logging.WARNING, logger="bloge.server"), LiveServer(app) as server:
        ready = httpx.get(server.url("/readyz"), timeout=30)
        run = httpx.get(server.url("/runs/r1"), timeout=30)
    closing = threading.Thread(target=asyncio.run, args=(store.aclose(),))
    closing.start()
    closing.join()
    for answer in (ready, run):
        assert answer.status_code == 503
        assert "the server's log says why" in answer.text
        for secret in (password, "pa?ss", "bob", "127.0.0.1:1", "shop"):
            assert secret not in answer.text
    logged = caplog.text
    assert "postgresql://bob:****@127.0.0.1:1/shop" in logged
    assert "pa?ss" not in logged


async def test_an_mcp_call_on_a_store_that_is_down_does_not_name_the_store() -> None:
    pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")
    pytest.importorskip("psycopg", reason="a PostgreSQL store needs the extra: pip install "
                        "'bloge[postgres]'")
    import httpx2  # noqa: PLC0415 -- the MCP SDK's client, there with the extra
    import mcp_types  # noqa: PLC0415 -- the extra, checked above
    from mcp import Client  # noqa: PLC0415 -- the extra, checked above
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 -- the extra

    store = open_store("postgresql://bob:pa?ss@127.0.0.1:1/shop")
    app = served_app(ScriptedProvider("Hi."), store, ServerConfig(), mcp=True)
    with LiveServer(app) as server:
        async with httpx2.AsyncClient() as http, \
                Client(streamable_http_client(server.url("/mcp"), http_client=http),
                       cache=None) as mcp:
            result = await mcp.call_tool("helper", {"message": "Hi"})
    await asyncio.to_thread(lambda: asyncio.run(store.aclose()))
    assert result.is_error
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert "the server's log says why" in block.text
    for secret in ("pa?ss", "bob", "127.0.0.1:1", "shop"):
        assert secret not in block.text
