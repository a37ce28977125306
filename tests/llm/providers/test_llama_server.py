"""bloge against what llama.cpp's ``llama-server`` answered (the llama.cpp vendored in
llama-cpp-python 0.3.36, ``--jinja``, SmolLM2-135M-Instruct), recorded with
``bench/realserver.py --record`` (``recorded/llama_server/``), replayed through
``httpx.MockTransport``: a plain answer, the same answer streamed with its usage, an answer
cut at ``max_tokens``, and the tools that the model's chat template leaves out of the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from bloge.llm import LlmMessage, LlmRequest, ToolDefinition
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy

RECORDED = Path(__file__).parent / "recorded" / "llama_server"
HELLO = LlmMessage.user("Say hello in one short sentence.")


def recorded(name: str) -> dict[str, Any]:
    exchange: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return exchange


def replaying(name: str, bodies: list[dict[str, Any]]) -> OpenAIChatProvider:
    """A provider whose server answers every request with the recorded answer ``name``."""
    exchange = recorded(name)

    def server(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(exchange["status"], content=exchange["response"].encode(),
                              headers={"content-type": exchange["content_type"]})

    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    return OpenAIChatProvider(base_url="http://127.0.0.1:18182/v1", api_key="none",
                              http_client=client, retry=RetryPolicy(max_attempts=1))


async def test_the_streamed_answer_is_the_plain_answer_with_its_usage() -> None:
    plain = await replaying("plain", []).chat(LlmRequest("smollm2", (HELLO,)))
    chunks = [c async for c in replaying("stream", []).stream_chat(
        LlmRequest("smollm2", (HELLO,)))]
    assert "".join(c.content for c in chunks) == plain.content
    last = chunks[-1]
    assert (last.finish_reason, last.prompt_tokens, last.completion_tokens) == (
        "stop", plain.prompt_tokens, plain.completion_tokens)


async def test_an_answer_cut_at_max_tokens_finishes_with_length() -> None:
    bodies: list[dict[str, Any]] = []
    request = LlmRequest("smollm2", (LlmMessage.user("Count from 1 to 100."),), max_tokens=8)
    response = await replaying("cut-at-max-tokens", bodies).chat(request)
    assert (response.finish_reason, response.completion_tokens) == ("length", 8)
    assert bodies[0]["max_tokens"] == 8


async def test_tools_the_chat_template_leaves_out_come_back_as_text() -> None:
    # SmolLM2's template has no tools: the server answers in text, the prompt without them.
    add = ToolDefinition("add", "Add two numbers a and b")
    bodies: list[dict[str, Any]] = []
    request = LlmRequest("smollm2", (LlmMessage.user("What is 2 + 3?"),), tools=(add,))
    response = await replaying("tools-the-template-leaves-out", bodies).chat(request)
    assert response.tool_calls == ()
    assert response.content.startswith("To add two numbers")
    assert bodies[0]["tool_choice"] == "auto"
