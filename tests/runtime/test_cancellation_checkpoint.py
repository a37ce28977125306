"""A cancelled run still hands over a checkpoint: the ``CancelledError`` propagates, caused by
an ``AgentRunError`` with exit reason ``"cancelled"``, and the checkpoint resumes the run."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from bloge import AgentRunError, LlmStreamingChatOperator, OperatorRegistry
from bloge.agent import AgentBuilder
from bloge.llm import (
    FunctionProvider,
    LlmChunk,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
)

from .helpers import agent_with, calls, scripted


def cancelled_run(cancelled: asyncio.CancelledError) -> AgentRunError:
    cause = cancelled.__cause__
    assert isinstance(cause, AgentRunError)
    return cause


async def test_a_cancelled_run_raises_cancelled_error_caused_by_an_agent_run_error() -> None:
    started = asyncio.Event()

    async def second_turn_hangs(request: LlmRequest) -> LlmResponse:
        if len(request.messages) == 1:
            return calls(("echo", {"text": "a"}))
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(agent_with(FunctionProvider(second_turn_hangs)).aexecute("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    failure = cancelled_run(caught.value)
    # Turn 2 never got its answer: it is not done, and a resume makes it again.
    assert (failure.exit_reason, failure.checkpoint.turn_count) == ("cancelled", 1)
    assert [m.role for m in failure.checkpoint.conversation] == ["user", "assistant", "tool"]
    assert "was cancelled in turn 2" in str(failure)


async def test_the_checkpoint_of_a_run_cancelled_in_its_tools_resumes() -> None:
    started = asyncio.Event()

    async def hang(input: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    def agent(provider: Any) -> Any:
        return agent_with(provider, tools={"Hang": hang}, configure=lambda b: b.tool("hang", "Hang"))

    task = asyncio.create_task(agent(scripted(calls(("hang", {})))).aexecute("go"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    checkpoint = cancelled_run(caught.value).checkpoint
    assert [m.role for m in checkpoint.conversation] == ["user"]  # the unanswered call is dropped
    resumed = await agent(scripted("answered after all")).aresume(checkpoint)
    assert resumed.content == "answered after all"


async def test_cancelling_the_consumer_of_a_stream_hands_over_the_runs_checkpoint() -> None:
    started = asyncio.Event()

    async def hang(input: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    provider = ScriptedProvider([LlmChunk(tool_call=ToolCall("c1", "hang", "{}")),
                                 LlmChunk(done=True)])
    registry = OperatorRegistry({"Hang": hang, "llmStreamingChat": LlmStreamingChatOperator(provider)})
    agent = (AgentBuilder.create("streamer", registry=registry).model("m").tool("hang", "Hang")
             .to_streaming_operator("streamer"))

    async def consume() -> None:
        async with contextlib.aclosing(agent.stream("go")) as chunks:
            async for _ in chunks:
                pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    failure = cancelled_run(caught.value)
    assert (failure.exit_reason, failure.checkpoint.agent_id) == ("cancelled", "streamer")
