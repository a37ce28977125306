"""How the MCP endpoint's tool call ends when its run fails or is cancelled, and by whom."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bloge.core.errors import ProviderError, RunError
from bloge.llm import LlmRequest, LlmResponse
from bloge.server.config import ServerConfig
from bloge.server.mcp_api import _answer
from bloge.server.tasks import RunTasks
from tests.server.conftest import Serve


class StoppedThroughTheStore:
    """An agent whose run is stopped as the run store's lease watcher stops it: its own task
    is cancelled, not the caller's."""

    def whole(self, agent_id: str) -> StoppedThroughTheStore:
        return self

    async def aexecute(self, message: str, ctx: object = None, *, run_id: str) -> Any:
        running = asyncio.current_task()
        assert running is not None
        running.cancel()
        await asyncio.Event().wait()  # until the cancellation arrives
        raise AssertionError("unreachable")


async def test_a_run_cancelled_through_the_store_is_the_tools_error() -> None:
    answer = _answer(StoppedThroughTheStore(), RunTasks(4), ServerConfig(), None, "helper")  # type: ignore[arg-type]  # a stand-in for ServedAgents
    with pytest.raises(RunError, match=r"run \w+ was cancelled"):
        await answer("hi", None)


async def test_a_caller_that_goes_away_cancels_its_run() -> None:
    entered, stopped = asyncio.Event(), asyncio.Event()

    class Waiting:
        def whole(self, agent_id: str) -> Waiting:
            return self

        async def aexecute(self, message: str, ctx: object = None, *, run_id: str) -> Any:
            entered.set()
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()

    call = asyncio.create_task(_answer(Waiting(), RunTasks(4), ServerConfig(), None, "helper")("hi", None))  # type: ignore[arg-type]  # a stand-in for ServedAgents
    await entered.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await stopped.wait()  # the run was cancelled with its caller


async def test_a_failed_run_is_the_tools_error_as_its_record_tells_it(serve: Serve) -> None:
    class Failing:
        async def chat(self, request: LlmRequest) -> LlmResponse:
            raise ProviderError("the model went away (password=hunter2)", provider="test",
                                status_code=502)

    served = serve(Failing(), mcp=True)
    async with httpx2.AsyncClient() as http, \
            Client(streamable_http_client(served.url("/mcp"), http_client=http),
                   cache=None) as mcp:
        result = await mcp.call_tool("helper", {"message": "hello"})
    [run] = await served.store.list_runs()
    assert run.error is not None
    [block] = result.content
    assert isinstance(block, mcp_types.TextContent)
    assert result.is_error
    assert block.text == f"run {run.id} failed: {run.error.message}"
    assert "hunter2" not in block.text
