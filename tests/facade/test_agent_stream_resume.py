"""``Agent.stream``/``astream`` and ``Agent.resume``/``aresume``: one operator for them all."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bloge import (
    Agent,
    AgentRunError,
    BlogeUsageError,
    Done,
    MaxTurnsExceededError,
    Token,
    ToolEnd,
    ToolStart,
    open_store,
)
from bloge.llm import LlmChunk, LlmRequest, LlmResponse, ScriptedProvider, tool_call_response


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def adding() -> ScriptedProvider:
    return ScriptedProvider(tool_call_response("add", json.dumps({"a": 2, "b": 3})), "5")


def kinds(chunks: object) -> list[str]:
    assert isinstance(chunks, list)
    return [type(chunk).__name__ for chunk in chunks]


def test_stream_yields_tool_chunks_tokens_and_done_last() -> None:
    chunks = list(Agent(adding(), [add]).stream("2 + 3?"))
    assert kinds(chunks) == ["ToolStart", "ToolEnd", "Token", "Done"]
    start, end, token, done = chunks
    assert isinstance(start, ToolStart)
    assert start.tool_name == "add"
    assert isinstance(end, ToolEnd)
    assert end.success
    assert isinstance(token, Token)
    assert token.text == "5"
    assert isinstance(done, Done)
    assert done.final_output.content == "5"


def test_stream_works_called_twice_and_from_another_thread() -> None:
    agent = Agent(ScriptedProvider("one", "two", "three"))
    assert kinds(list(agent.stream("a"))) == ["Token", "Done"]
    assert kinds(list(agent.stream("b"))) == ["Token", "Done"]
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.extend(agent.stream("c")))
    worker.start()
    worker.join()
    assert isinstance(seen[-1], Done)
    assert seen[-1].final_output.content == "three"


def test_the_operator_that_runs_whole_runs_streams_them_too() -> None:
    agent = Agent(ScriptedProvider("whole", "streamed"))
    operator = agent.operator
    assert agent.run("a") == "whole"
    assert kinds(list(agent.stream("b"))) == ["Token", "Done"]
    assert agent.operator is operator


def test_leaving_a_stream_early_ends_the_run_and_the_agent_goes_on() -> None:
    agent = Agent(ScriptedProvider(tool_call_response("add", '{"a": 1, "b": 1}'), "2", "next"),
                  [add])
    for _ in agent.stream("1 + 1?"):
        break
    assert agent.run("again") in {"2", "next"}


def test_stream_raises_max_turns_exceeded_after_the_chunks_before_it() -> None:
    agent = Agent(ScriptedProvider(tool_call_response("add", '{"a": 1, "b": 1}')), [add],
                  max_turns=1)
    seen: list[object] = []
    with pytest.raises(MaxTurnsExceededError):
        seen.extend(agent.stream("add forever"))
    assert kinds(seen) == ["ToolStart", "ToolEnd"]


async def test_stream_inside_a_running_event_loop_is_a_clear_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match=r"stream\(\) was called inside a running event "
                                              r"loop; use `async for chunk in \.\.\.astream"):
        Agent(ScriptedProvider("hi")).stream("hello")


async def test_astream_yields_the_chunks_inside_an_event_loop() -> None:
    agent = Agent(adding(), [add])
    async with contextlib.aclosing(agent.astream("2 + 3?")) as chunks:
        seen = [chunk async for chunk in chunks]
    assert kinds(seen) == ["ToolStart", "ToolEnd", "Token", "Done"]


def test_resume_continues_from_a_max_turns_checkpoint_without_a_store() -> None:
    agent = Agent(adding(), [add], max_turns=1)
    with pytest.raises(MaxTurnsExceededError) as exceeded:
        agent.run_output("2 + 3?")
    agent.operator.retune(max_turns=2)
    output = agent.resume(exceeded.value.checkpoint)
    assert output.content == "5"
    assert output.turns_used == 2


def test_resume_adds_input_after_the_checkpoint() -> None:
    model = ScriptedProvider("first", "second")
    agent = Agent(model)
    output = agent.run_output("hello")
    resumed = agent.resume(output.checkpoint, input="and then?")
    assert resumed.content == "second"
    assert [m.content for m in model.requests[1].messages][-2:] == ["first", "and then?"]


class FailsOnce:
    """A model down for its first request, then answering."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: LlmRequest) -> LlmResponse:
        self.calls += 1
        if self.calls == 2:
            raise ConnectionError("the model is down")
        return (tool_call_response("add", '{"a": 2, "b": 3}') if self.calls == 1
                else LlmResponse(content="5"))

    def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        raise NotImplementedError


def test_resume_continues_a_recorded_run_by_its_id(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    agent = Agent(FailsOnce(), [add], store=store)
    with pytest.raises(AgentRunError) as failed:
        agent.run_output("2 + 3?")
    run_id = failed.value.run_id
    assert run_id is not None
    output = agent.resume(run_id)
    assert output.content == "5"
    assert output.run_id == run_id


def test_resume_by_run_id_needs_a_store() -> None:
    with pytest.raises(BlogeUsageError, match="needs the store it was recorded in"):
        Agent(ScriptedProvider("hi")).resume("run-1")


def test_a_recorded_run_resumes_without_new_input(tmp_path: Path) -> None:
    agent = Agent(ScriptedProvider("hi"), store=open_store(f"sqlite:///{tmp_path / 'b.db'}"))
    with pytest.raises(BlogeUsageError, match="resumes where it stopped, without new input"):
        agent.resume("run-1", input="more")


async def test_aresume_continues_inside_an_event_loop() -> None:
    agent = Agent(ScriptedProvider("first", "second"))
    output = await agent.arun_output("hello")
    assert (await agent.aresume(output.checkpoint, input="more")).content == "second"
