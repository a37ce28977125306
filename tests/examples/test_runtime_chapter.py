"""The runtime chapter's example (examples/runtime_chapter): EchoLlm, AddTool, POST /chat."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import httpx

from bloge import Agent, Tool
from bloge.llm import ScriptedProvider, tool_call_response
from examples.runtime_chapter.chat_app import AddTool, app, chat_agent
from tests.uvicorn_server import WAIT_SECONDS, UvicornServer

REPO = Path(__file__).resolve().parents[2]
RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


def test_the_chat_app_answers_post_chat_with_the_echo() -> None:
    with UvicornServer(app) as server:
        response = httpx.post(server.url("/chat"), content="hello")
    assert (response.status_code, response.text) == (200, "agent says: hello")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"


def test_the_chat_agent_offers_the_add_tool_to_its_model() -> None:
    assert [tool.name for tool in chat_agent.operator.agent_def.tools] == ["add"]


def test_the_add_tool_adds_the_integers_the_model_sends() -> None:
    assert isinstance(AddTool(), Tool)
    model = ScriptedProvider(tool_call_response("add", '{"a": 2, "b": 40}'), "2 + 40 = 42")
    output = Agent(model, [AddTool()]).run_output("What is 2 + 40?")
    assert [m.content for m in output.messages if m.role == "tool"] == ["42"]
    assert output.content == "2 + 40 = 42"


def test_the_example_command_serves_post_chat_on_the_port_it_is_given() -> None:
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.runtime_chapter.chat_app", "--port", "0"],
        cwd=REPO, env=environment, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    # Read on a thread, so that a child that never prints cannot hang the test.
    reader = threading.Thread(target=_read_lines, args=(process.stderr, lines))
    reader.start()
    try:
        port = _served_port(lines)
        response = httpx.post(f"http://127.0.0.1:{port}/chat", content="hi")
        assert (response.status_code, response.text) == (200, "agent says: hi")
    finally:
        process.terminate()
        process.wait(WAIT_SECONDS)
        reader.join(WAIT_SECONDS)
        process.stderr.close()


def _read_lines(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)
    lines.put("")  # the end


def _served_port(lines: queue.Queue[str]) -> int:
    """The port of uvicorn's "running on" line."""
    seen = []
    while line := lines.get(timeout=WAIT_SECONDS):
        seen.append(line)
        found = RUNNING.search(line)
        if found:
            return int(found.group(1))
    raise AssertionError("the example exited:\n" + "".join(seen))
