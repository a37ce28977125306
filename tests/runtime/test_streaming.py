"""The streaming operator: chunk order, a bounded channel, cancellation, failures."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bloge import (
    AgentBuilder,
    AgentLoopOperator,
    Done,
    LlmStreamingChatOperator,
    MaxTurnsExceededError,
    OperatorRegistry,
    StreamingAgentLoopOperator,
    Token,
    ToolEnd,
    ToolStart,
    UnknownOperatorError,
    agent_operator,
)
from bloge.llm import LlmChunk, LlmRequest, ScriptedProvider, ToolCall

from .helpers import echo


def streaming_agent(provider: Any, *, tools: dict[str, object] | None = None, capacity: int = 16,
                    configure: Any = None) -> StreamingAgentLoopOperator:
    registry = OperatorRegistry({"Echo": echo, **(tools or {}),
                                 "llmStreamingChat": LlmStreamingChatOperator(provider)})
    builder = (AgentBuilder.create("streamer", registry=registry).model("m")
               .streaming_buffer_capacity(capacity)
               .tool("echo", "Echo", input={"text": "tool_args.text"}))
    if configure is not None:
        configure(builder)
    return builder.to_streaming_operator("streamer")


def tool_chunks(*calls: ToolCall) -> list[LlmChunk]:
    return [*(LlmChunk(tool_call=c) for c in calls), LlmChunk(done=True)]


async def test_chunks_follow_the_run_and_done_comes_last_exactly_once() -> None:
    provider = ScriptedProvider(
        [LlmChunk(content="Let me check. "), *tool_chunks(ToolCall("c1", "echo", '{"text": "a"}'))],
        "All good now.",
    )
    chunks = await streaming_agent(provider).aexecute("go")
    assert [type(c).__name__ for c in chunks] == [
        "Token", "ToolStart", "ToolEnd", "Token", "Token", "Token", "Done"]
    assert chunks[1] == ToolStart("echo", "c1", 1)
    assert chunks[2] == ToolEnd("echo", "c1", success=True, turn_number=1)
    assert [c.turn_number for c in chunks if isinstance(c, Token)] == [1, 2, 2, 2]
    done = chunks[-1]
    assert isinstance(done, Done)
    assert done.final_output.content == "All good now."
    assert done.final_output.finish_reason == "stop"


async def test_arun_hands_each_chunk_to_on_chunk_and_returns_the_output() -> None:
    provider = ScriptedProvider(
        [LlmChunk(content="Let me check. "), *tool_chunks(ToolCall("c1", "echo", '{"text": "a"}'))],
        "All good now.",
    )
    seen: list[Any] = []

    async def on_chunk(chunk: Any) -> None:
        seen.append(chunk)

    output = await streaming_agent(provider).arun("go", on_chunk=on_chunk)
    assert output.content == "All good now."
    assert [type(c).__name__ for c in seen] == [
        "Token", "ToolStart", "ToolEnd", "Token", "Token", "Token"]


async def test_a_stream_without_finish_reason_infers_it_from_tool_calls() -> None:
    provider = ScriptedProvider(tool_chunks(ToolCall("c1", "echo", '{"text": "a"}')), "fine")
    chunks = await streaming_agent(provider).aexecute("go")
    first_answer = chunks[-1].final_output.messages[1]
    assert first_answer.tool_calls[0].id == "c1"
    assert isinstance(chunks[-1], Done)


async def test_failed_tools_stream_tool_end_with_success_false() -> None:
    provider = ScriptedProvider(tool_chunks(ToolCall("c1", "nope", "{}")), "sorry")
    chunks = await streaming_agent(provider).aexecute("go")
    assert ToolEnd("nope", "c1", success=False, turn_number=1) in chunks


class CountingStream:
    """A provider streaming ``count`` tokens, recording how many it produced and closure.

    It never waits for anything, so the run it feeds goes on until the channel to the consumer
    is full, the one await at which a producer waits for its consumer.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.produced = 0
        self.closed = False

    async def chat(self, request: LlmRequest) -> Any:
        raise NotImplementedError

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        try:
            for index in range(self.count):
                self.produced += 1
                yield LlmChunk(content=f"t{index} ")
            yield LlmChunk(done=True, finish_reason="stop")
        finally:
            self.closed = True


async def test_a_slow_consumer_holds_the_producer_within_the_buffer_capacity() -> None:
    provider = CountingStream(200)
    agent = streaming_agent(provider, capacity=4)
    consumed = 0
    lead = []
    async with contextlib.aclosing(agent.stream("go")) as chunks:
        # The consumer gets each chunk only once the run can go no further: at each, the run
        # is as far ahead as the channel lets it be.
        async for chunk in chunks:
            consumed += 1
            lead.append(provider.produced - consumed)
            if isinstance(chunk, Done):
                break
    assert max(lead) <= 4 + 1  # the channel's capacity, plus the one chunk being put
    assert consumed == 201


async def test_closing_the_stream_cancels_the_run_and_closes_the_provider_stream() -> None:
    provider = CountingStream(10_000)
    agent = streaming_agent(provider, capacity=2)
    async with contextlib.aclosing(agent.stream("go")) as chunks:
        async for chunk in chunks:
            assert isinstance(chunk, Token)
            break
    assert provider.closed
    assert provider.produced < 10
    assert asyncio.all_tasks() == {asyncio.current_task()}  # the run's task is gone


async def test_closing_the_stream_cancels_running_tools() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def wait_forever(input: dict[str, Any]) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    provider = ScriptedProvider(tool_chunks(ToolCall("c1", "wait", "{}")))
    agent = streaming_agent(provider, tools={"Wait": wait_forever},
                            configure=lambda b: b.tool("wait", "Wait"))
    async with contextlib.aclosing(agent.stream("go")) as chunks:
        async for chunk in chunks:
            if isinstance(chunk, ToolStart):
                await started.wait()
                break
    assert cancelled.is_set()


async def test_a_failed_run_raises_from_the_stream_after_its_chunks() -> None:
    provider = ScriptedProvider(*[tool_chunks(ToolCall(f"c{i}", "echo", '{"text": "a"}'))
                                  for i in range(3)])
    agent = streaming_agent(provider, configure=lambda b: b.max_turns(2))
    seen: list[object] = []

    async def consume() -> None:
        async for chunk in agent.stream("go"):
            seen.append(chunk)  # noqa: PERF401 -- the chunks before the failure are the point

    with pytest.raises(MaxTurnsExceededError) as caught:
        await consume()
    assert not any(isinstance(c, Done) for c in seen)
    assert sum(isinstance(c, ToolEnd) for c in seen) == 2
    assert caught.value.checkpoint.turn_count == 2


async def test_resume_stream_continues_from_a_checkpoint() -> None:
    provider = ScriptedProvider(tool_chunks(ToolCall("c1", "echo", '{"text": "a"}')), "resumed")
    capped = streaming_agent(provider, configure=lambda b: b.max_turns(1))
    with pytest.raises(MaxTurnsExceededError) as caught:
        await capped.aexecute("go")
    agent = streaming_agent(provider, configure=lambda b: b.max_turns(3))
    chunks = [c async for c in agent.resume_stream(caught.value.checkpoint)]
    assert chunks[-1].final_output.content == "resumed"
    assert chunks[-1].final_output.turns_used == 2


def test_execute_returns_the_materialized_chunk_list() -> None:
    chunks = streaming_agent(ScriptedProvider("two words")).execute("go")
    assert chunks[:-1] == [Token("two ", 1), Token("words", 1)]


async def test_a_missing_streaming_chat_operator_is_named() -> None:
    registry = OperatorRegistry({"llmChat": lambda request: request})
    agent = AgentBuilder.create("s", registry=registry).model("m").to_streaming_operator("s")
    with pytest.raises(UnknownOperatorError, match="no streaming chat operator registered under 'llmStreamingChat'"):
        await agent.aexecute("go")


def test_a_streaming_definition_materializes_the_streaming_operator() -> None:
    registry = OperatorRegistry({"llmChat": echo, "llmStreamingChat": echo})
    plain = AgentBuilder.create("a").model("m").build()
    streaming = AgentBuilder.create("s").model("m").streaming(True).build()  # noqa: FBT003 -- the appendix's call
    assert type(agent_operator("a", plain, registry)) is AgentLoopOperator
    assert type(agent_operator("s", streaming, registry)) is StreamingAgentLoopOperator


async def test_a_provider_whose_chunks_carry_none_as_content_runs_to_its_answer() -> None:
    none: Any = None  # what a provider that passes OpenAI's null deltas on yields
    provider = ScriptedProvider(
        [LlmChunk(content=none, tool_call=ToolCall("c1", "echo", '{"text": "a"}')),
         LlmChunk(content=none, done=True, finish_reason="tool_calls")],
        [LlmChunk(content=none), LlmChunk(content="Done."), LlmChunk(done=True)],
    )
    chunks = await streaming_agent(provider).aexecute("go")
    done = chunks[-1]
    assert isinstance(done, Done)
    assert done.final_output.content == "Done."
    assert done.final_output.turns_used == 2
