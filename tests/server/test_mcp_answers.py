"""How the MCP endpoint's tool call ends when its run is cancelled, and by whom."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP endpoint needs the extra: pip install 'bloge[mcp]'")

from bloge.core.errors import RunError
from bloge.server.config import ServerConfig
from bloge.server.mcp_api import _answer
from bloge.server.tasks import RunTasks


class StoppedThroughTheStore:
    """An agent whose run is stopped as the run store's lease watcher stops it: its own task
    is cancelled, not the caller's."""

    def whole(self, agent_id: str) -> StoppedThroughTheStore:
        return self

    async def aexecute(self, message: str, *, run_id: str) -> Any:
        running = asyncio.current_task()
        assert running is not None
        running.cancel()
        await asyncio.Event().wait()  # until the cancellation arrives
        raise AssertionError("unreachable")


async def test_a_run_cancelled_through_the_store_is_the_tools_error() -> None:
    answer = _answer(StoppedThroughTheStore(), RunTasks(4), ServerConfig(), "helper")  # type: ignore[arg-type]  # a stand-in for ServedAgents
    with pytest.raises(RunError, match=r"run \w+ was cancelled"):
        await answer("hi")


async def test_a_caller_that_goes_away_cancels_its_run() -> None:
    entered, stopped = asyncio.Event(), asyncio.Event()

    class Waiting:
        def whole(self, agent_id: str) -> Waiting:
            return self

        async def aexecute(self, message: str, *, run_id: str) -> Any:
            entered.set()
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()

    call = asyncio.create_task(_answer(Waiting(), RunTasks(4), ServerConfig(), "helper")("hi"))  # type: ignore[arg-type]  # a stand-in for ServedAgents
    await entered.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await stopped.wait()  # the run was cancelled with its caller
