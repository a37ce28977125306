"""bloge against what a real OpenAI-compatible server answered: llama-cpp-python 0.3.36
(``python -m llama_cpp.server --chat_format chatml-function-calling``) serving
SmolLM2-135M-Instruct, recorded with ``bench/realserver.py --record`` (``recorded/``), replayed
through ``httpx.MockTransport``.

The server drops the tools of a request that has no ``tool_choice`` (its prompt: 36 tokens
instead of 224, and a text answer), answers HTTP 500 with a validation error to an assistant
message whose ``content`` is null next to its tool calls, and ends a stream with tools and
``tool_choice: "auto"`` at once, without an event (it cannot stream an automatic choice); the
replay answers each request as the server did to that shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bloge import AgentBuilder, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.core.errors import ProviderError
from bloge.llm import LlmChunk, LlmMessage, LlmRequest, ToolCall, ToolDefinition
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy

RECORDED = Path(__file__).parent / "recorded" / "llama_cpp_python"
BASE_URL = "http://127.0.0.1:18181/v1"
ADD = ToolDefinition("add", "Add two numbers a and b", {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"]})


def recorded(name: str) -> dict[str, Any]:
    exchange: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return exchange


def answer(name: str) -> httpx.Response:
    """The server's recorded answer ``name``, as it sent it."""
    exchange = recorded(name)
    return httpx.Response(exchange["status"], content=exchange["response"].encode(),
                          headers={"content-type": exchange["content_type"]})


class LlamaCppPython:
    """Answers each request as the recorded server answered its shape; keeps the bodies."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        messages = body["messages"]
        if any(m["role"] == "assistant" and m.get("tool_calls") and m.get("content") is None
               for m in messages):
            return answer("assistant-content-null")
        if body.get("tools") and "tool_choice" not in body:
            return answer("tools-without-tool-choice")
        if any(m["role"] == "tool" for m in messages):
            return answer("tool-result-answer")
        if body.get("stream") and body.get("tools"):
            # Its log: "ValueError: Automatic streaming tool choice is not supported".
            auto = body["tool_choice"] == "auto"
            return answer("stream-auto-tool-choice" if auto else "stream-forced-tool-call")
        if body.get("stream"):
            return answer("stream")
        if body.get("tools"):
            return answer("tool-call")
        return answer("cut-at-max-tokens" if body.get("max_tokens") == 8 else "plain")


def provider(server: LlamaCppPython) -> OpenAIChatProvider:
    return OpenAIChatProvider(base_url=BASE_URL, api_key="none",
                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)),
                              retry=RetryPolicy(max_attempts=1))


def add(input: dict[str, float]) -> dict[str, float]:
    return {"sum": input["a"] + input["b"]}


async def test_an_agent_with_a_tool_runs_its_tool_round_on_llama_cpp_python() -> None:
    server = LlamaCppPython()
    registry = (OperatorRegistry().register("llmChat", LlmChatOperator(provider(server)))
                .register("Add", add))
    definition = (AgentBuilder.create("calculator").model("smollm2").temperature(0)
                  .system_prompt("You are a calculator. To add numbers, call the add tool.")
                  .tool("add", "Add", description="Add two numbers a and b",
                        input={"a": "tool_args.a", "b": "tool_args.b"},
                        parameters=ADD.parameters)
                  .max_tokens(64).build())
    output = await AgentLoopOperator("calculator", definition, registry).aexecute(
        "What is 2 + 3?")
    assert output.content == json.loads(recorded("tool-result-answer")["response"])[
        "choices"][0]["message"]["content"]
    assert [m.content for m in output.messages if m.role == "tool"] == ['{"sum":5}']
    first, second = server.bodies
    assert (first["tool_choice"], first["max_tokens"]) == ("auto", 64)
    assert second["messages"][2]["content"] == ""


async def test_llama_cpp_pythons_refusal_names_its_error_and_keeps_the_request() -> None:
    def refusing(request: httpx.Request) -> httpx.Response:
        return answer("assistant-content-null")

    client = httpx.AsyncClient(transport=httpx.MockTransport(refusing))
    model = OpenAIChatProvider(base_url=BASE_URL, api_key="none", http_client=client,
                               retry=RetryPolicy(max_attempts=1))
    call = ToolCall("call_1", "add", '{"a": 2, "b": 3}')
    request = LlmRequest("smollm2", (LlmMessage.user("What is 2 + 3?"),
                                     LlmMessage.assistant("", [call]),
                                     LlmMessage.tool("call_1", '{"sum": 5}')), tools=(ADD,))
    with pytest.raises(ProviderError, match="7 validation errors") as caught:
        await model.chat(request)
    assert caught.value.status_code == 500
    assert caught.value.request is not None
    assert '{"role":"tool","tool_call_id":"call_1","content":"{\\"sum\\": 5}"}' in (
        caught.value.request)


async def test_the_recorded_answer_cut_at_max_tokens_finishes_with_length() -> None:
    server = LlamaCppPython()
    request = LlmRequest("smollm2", (LlmMessage.user("Count from 1 to 100."),), max_tokens=8)
    response = await provider(server).chat(request)
    assert (response.finish_reason, response.completion_tokens) == ("length", 8)


async def collect(chunks: AsyncIterator[LlmChunk]) -> list[LlmChunk]:
    return [chunk async for chunk in chunks]


async def test_the_recorded_stream_of_text_is_read_whole() -> None:
    server = LlamaCppPython()
    request = LlmRequest("smollm2", (LlmMessage.user("Say hello in one short sentence."),))
    chunks = await collect(provider(server).stream_chat(request))
    assert "".join(c.content for c in chunks) == json.loads(recorded("plain")["response"])[
        "choices"][0]["message"]["content"]
    assert (chunks[-1].done, chunks[-1].finish_reason) == (True, "stop")


async def test_the_recorded_stream_of_a_forced_tool_call_gives_one_call() -> None:
    # The server repeats the call's id and name on every fragment of its arguments.
    server = LlamaCppPython()
    request = LlmRequest("smollm2", (LlmMessage.user("What is 2 + 3?"),), tools=(ADD,),
                         tool_choice="add")
    chunks = await collect(provider(server).stream_chat(request))
    calls = [c.tool_call for c in chunks if c.tool_call is not None]
    assert calls == [ToolCall("call__0_add_cmpl-e81ec3d3-393e-4c99-8f33-c27dc81f5b7f", "add",
                              '{"a": 2, "b": 3}')]
    assert chunks[-1].finish_reason == "tool_calls"
    assert server.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "add"}}


async def test_a_stream_ended_without_an_event_says_so_and_keeps_the_request() -> None:
    server = LlamaCppPython()
    request = LlmRequest("smollm2", (LlmMessage.user("What is 2 + 3?"),), tools=(ADD,))
    with pytest.raises(ProviderError, match="ended the stream without sending any event") as caught:
        await collect(provider(server).stream_chat(request))
    assert caught.value.request is not None
    assert '"tool_choice":"auto"' in caught.value.request
