"""One model call: a chat operator answers whole or streamed, and the loop takes either."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bloge import AgentBuilder, AgentLoopOperator, AgentRunError, OperatorRegistry
from bloge.llm import LlmChunk, LlmRequest, LlmResponse


async def streamed(request: LlmRequest) -> AsyncIterator[LlmChunk]:
    for chunk in (LlmChunk("Hel"), LlmChunk("lo."),
                  LlmChunk(done=True, finish_reason="stop", prompt_tokens=3,
                           completion_tokens=2)):
        yield chunk


async def whole(request: LlmRequest) -> LlmResponse:
    return LlmResponse("Hello.", prompt_tokens=3, completion_tokens=2)


async def neither(request: LlmRequest) -> str:
    return "Hello."


def agent(chat: object) -> AgentLoopOperator:
    return (AgentBuilder.create("a", registry=OperatorRegistry({"llmChat": chat})).model("m")
            .to_operator("a"))


@pytest.mark.parametrize("chat", [streamed, whole])
async def test_a_whole_run_takes_a_streamed_answer_joined_or_a_whole_one(chat: object) -> None:
    output = await agent(chat).aexecute("hi")
    assert (output.content, output.finish_reason) == ("Hello.", "stop")
    assert (output.usage.prompt_tokens, output.usage.completion_tokens) == (3, 2)


async def test_an_answer_that_is_neither_names_the_operator() -> None:
    with pytest.raises(AgentRunError, match="the 'llmChat' operator returned a str, not an "
                                              "LlmResponse or an async iterator of LlmChunk"):
        await agent(neither).aexecute("hi")
