"""Sync tools on bloge's worker threads: a tool past its timeout never holds the run, the
event loop's own executor or the interpreter's exit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bloge import AgentLoopOperator
from bloge.llm import LlmResponse, ToolCall

from .helpers import agent_with, scripted

WAIT_SECONDS = 10.0  # only reached when a test is about to fail anyway


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Holds the hung tools of a test; opened when the test ends, so that their threads end."""
    opened = threading.Event()
    yield opened
    opened.set()


def hung_tool_agent(gate: threading.Event, calls: int) -> AgentLoopOperator:
    def hang(input: dict[str, Any]) -> str:
        gate.wait()
        return "too late"

    tool_calls = tuple(ToolCall(f"c{n}", "hang", "{}") for n in range(calls))
    provider = scripted(LlmResponse(finish_reason="tool_calls", tool_calls=tool_calls), "gave up")
    return agent_with(provider, tools={"Hang": hang},
                      configure=lambda b: b.tool_timeout(0.01).tool("hang", "Hang"))


def test_execute_returns_while_a_timed_out_sync_tool_still_runs(gate: threading.Event) -> None:
    agent = hung_tool_agent(gate, calls=1)
    outputs: list[str] = []
    caller = threading.Thread(target=lambda: outputs.append(agent.execute("go").content))
    caller.start()
    caller.join(WAIT_SECONDS)
    assert outputs == ["gave up"]
    assert not gate.is_set()


async def test_timed_out_sync_tools_leave_the_event_loops_executor_free(
    gate: threading.Event,
) -> None:
    # More hung calls than any default executor has threads (it also serves getaddrinfo).
    output = await hung_tool_agent(gate, calls=40).aexecute("go")
    assert all("timed out" in m.content for m in output.messages if m.role == "tool")
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            assert await loop.run_in_executor(None, str.upper, "free") == "FREE"
    finally:
        gate.set()  # before this loop shuts down, which waits for its executor's threads


def test_a_hung_sync_tool_does_not_keep_the_interpreter_from_exiting() -> None:
    script = textwrap.dedent("""
        import threading
        from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
        from bloge.llm import LlmResponse, ScriptedProvider, ToolCall

        def hang(input):
            threading.Event().wait()

        call = ToolCall("c1", "hang", "{}")
        provider = ScriptedProvider(LlmResponse(finish_reason="tool_calls", tool_calls=(call,)),
                                    "gave up")
        registry = OperatorRegistry({"Hang": hang, "llmChat": LlmChatOperator(provider)})
        agent = (AgentBuilder.create("a", registry=registry).model("m").tool_timeout(0.01)
                 .tool("hang", "Hang").to_operator("a"))
        print(agent.execute("go").content)
    """)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=WAIT_SECONDS, check=False)
    assert (finished.returncode, finished.stdout) == (0, "gave up\n")
