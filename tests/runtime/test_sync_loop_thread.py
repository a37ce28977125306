"""The loop thread behind the sync facades: Ctrl-C, ``sys.exit()`` in a tool, context
variables and ``os.fork()`` behave as they would for a direct call."""

from __future__ import annotations

import contextvars
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import Recorder, agent_with, calls, scripted

WAIT_SECONDS = 10.0  # only reached when a test is about to fail anyway
tenant: contextvars.ContextVar[str] = contextvars.ContextVar("tenant", default="none")


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Holds the hung tools of a test; opened when the test ends, so that their threads end."""
    opened = threading.Event()
    yield opened
    opened.set()


def test_ctrl_c_during_execute_cancels_the_run_at_once_and_propagates(
    gate: threading.Event,
) -> None:
    assert threading.current_thread() is threading.main_thread()
    recorder = Recorder()
    returned: list[bool] = []

    def press_ctrl_c(input: dict[str, Any]) -> str:
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        gate.wait(WAIT_SECONDS)
        returned.append(True)
        return "too late"

    agent = agent_with(scripted(calls(("press", {})), "never"), tools={"Press": press_ctrl_c},
                       listeners=[recorder], configure=lambda b: b.tool("press", "Press"))
    with pytest.raises(KeyboardInterrupt):
        agent.execute("go")
    assert recorder.payloads("loop_exited")[0].exit_reason == "cancelled"
    assert returned == []  # the tool still runs: the run did not wait for it


def test_a_tool_calling_sys_exit_raises_it_to_the_caller_and_later_calls_still_work() -> None:
    def leave(input: dict[str, Any]) -> str:
        sys.exit(3)

    quitting = agent_with(scripted(calls(("leave", {})), "never"), tools={"Leave": leave},
                          configure=lambda b: b.tool("leave", "Leave"))
    with pytest.raises(SystemExit):
        quitting.execute("go")
    assert agent_with(scripted("still here")).execute("hi").content == "still here"


def test_the_callers_context_variables_reach_tools_and_listeners() -> None:
    seen: list[str] = []

    class Listener(Recorder):
        def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
            seen.append(f"listener:{tenant.get()}")

    def tool(input: dict[str, Any]) -> str:
        seen.append(f"tool:{tenant.get()}")
        return "ok"

    agent = agent_with(scripted(calls(("tool", {})), "done"), tools={"Tool": tool},
                       listeners=[Listener()], configure=lambda b: b.tool("tool", "Tool"))
    token = tenant.set("acme")
    try:
        agent.execute("go")
    finally:
        tenant.reset(token)
    assert seen == ["tool:acme", "listener:acme"]


def test_a_sync_tool_may_run_another_agent_through_its_sync_facade() -> None:
    inner = agent_with(scripted("inner answer"))

    def delegate(input: dict[str, Any]) -> str:
        return inner.execute("question for the inner agent").content

    outer = agent_with(scripted(calls(("delegate", {})), "outer answer"),
                       tools={"Delegate": delegate}, configure=lambda b: b.tool("delegate", "Delegate"))
    output = outer.execute("go")
    assert output.content == "outer answer"
    assert output.messages[2].content == "inner answer"


def test_a_forked_child_runs_agents_on_a_loop_thread_of_its_own() -> None:
    script = textwrap.dedent("""
        import os
        from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
        from bloge.llm import ScriptedProvider

        provider = ScriptedProvider("parent", "child")
        registry = OperatorRegistry({"llmChat": LlmChatOperator(provider)})
        agent = AgentBuilder.create("a", registry=registry).model("m").to_operator("a")
        assert agent.execute("warm up in the parent").content == "parent"
        pid = os.fork()
        if pid == 0:
            os._exit(0 if agent.execute("in the child").content == "child" else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=WAIT_SECONDS, check=False)
    assert (finished.returncode, finished.stdout) == (0, "0\n")


def test_tasks_left_on_the_loop_thread_are_ended_at_exit_without_a_warning() -> None:
    # As a connection pool's workers are, when a sync user never closes a PostgreSQL store.
    script = textwrap.dedent("""
        import asyncio
        import atexit
        from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
        from bloge.llm import LlmResponse, ScriptedProvider, ToolCall

        cleaned = []

        async def worker():
            try:
                await asyncio.Event().wait()
            finally:
                cleaned.append(True)

        async def start_worker(input):
            asyncio.get_running_loop().create_task(worker())
            return "started"

        call = ToolCall("c1", "start", "{}")
        provider = ScriptedProvider(LlmResponse(finish_reason="tool_calls", tool_calls=(call,)),
                                    "done")
        registry = OperatorRegistry({"Start": start_worker, "llmChat": LlmChatOperator(provider)})
        agent = AgentBuilder.create("a", registry=registry).model("m").tool(
            "start", "Start").to_operator("a")
        # Registered before the loop thread starts, so it runs after bloge's exit handler.
        atexit.register(lambda: print("cleaned" if cleaned else "not cleaned"))
        print(agent.execute("go").content)
    """)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=WAIT_SECONDS, check=False)
    assert (finished.returncode, finished.stdout) == (0, "done\ncleaned\n")
    assert "Task was destroyed but it is pending" not in finished.stderr
