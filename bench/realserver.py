"""bloge's OpenAI provider against a real OpenAI-compatible server (llama.cpp's llama-server,
llama-cpp-python, Ollama, vLLM, LM Studio …), to see that they understand each other.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 .venv/bin/python bench/realserver.py

Checks, each printed with what it saw: a plain answer (text, finish reason, usage); a streamed
one (the same, from the chunks); a tool call (``add``, with ``tool_choice`` "auto", then forced
when a small model does not choose it) and the answer to its result, which sends the
assistant's tool-call message back; an answer cut at ``max_tokens`` (finish reason
``length``). Exit status 0 when every check held; a model that answers badly is reported, but
only what bloge must get right fails a check (a model that calls no tool even when forced is a
skip: many chat templates have no tools).

``OPENAI_API_KEY`` (default ``none``) and ``OPENAI_MODEL`` (default: the server's first model)
are read too; ``--record DIR`` writes every request and answer there as JSON, to keep as test
payloads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from bloge.core.errors import ProviderError
from bloge.llm import LlmMessage, LlmRequest, LlmResponse, ToolDefinition
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy

ADD = ToolDefinition("add", "Add two numbers a and b", {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"]})
SYSTEM = LlmMessage.system("You are a calculator. To add numbers, call the add tool.")
QUESTION = LlmMessage.user("What is 2 + 3?")


class RecordingTransport(httpx.AsyncBaseTransport):
    """Sends through ``inner`` and keeps each request body with the answer's status and
    text (a stream's text whole)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.exchanges: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        sent = json.loads(request.content) if request.content else None
        self.exchanges.append({"method": request.method, "path": request.url.path,
                               "request": sent, "status": response.status_code,
                               "content_type": response.headers.get("content-type", ""),
                               "response": body.decode("utf-8", "replace")})
        # The body is decoded now: the headers that describe its encoding no longer hold.
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(response.status_code, headers=headers, content=body,
                              request=request)


Check = Callable[[OpenAIChatProvider, str], Awaitable[str]]


class Skipped(Exception):  # noqa: N818 -- a check's outcome, not an error
    """The server or its model cannot be checked this way (what bloge sent is not at fault)."""


class Checks:
    def __init__(self) -> None:
        self.failures = 0

    async def run(self, name: str, check: Check, provider: OpenAIChatProvider,
                  model: str) -> None:
        try:
            seen = await check(provider, model)
        except (ProviderError, AssertionError) as error:
            self.failures += 1
            print(f"FAIL  {name}: {error}")
            return
        except Skipped as why:
            print(f"skip  {name}: {why}")
            return
        print(f"ok    {name}: {seen}")


def usage(response: LlmResponse) -> str:
    return f"usage {response.prompt_tokens}+{response.completion_tokens}"


async def plain(provider: OpenAIChatProvider, model: str) -> str:
    request = LlmRequest(model, (LlmMessage.user("Say hello in one short sentence."),),
                         temperature=0, max_tokens=48)
    answer = await provider.chat(request)
    assert answer.content.strip(), "the answer has no text"
    assert answer.prompt_tokens > 0, "no usage in the answer"
    return f"{answer.content.strip()[:60]!r}, finish {answer.finish_reason}, {usage(answer)}"


async def streamed(provider: OpenAIChatProvider, model: str) -> str:
    request = LlmRequest(model, (LlmMessage.user("Say hello in one short sentence."),),
                         temperature=0, max_tokens=48)
    pieces: list[str] = []
    last = None
    async for chunk in provider.stream_chat(request):
        pieces.append(chunk.content)
        last = chunk
    assert last is not None, "the stream ended without a done chunk"
    assert last.done, "the last chunk is not done"
    assert "".join(pieces).strip(), "the stream carried no text"
    counted = ("no usage in the stream" if last.prompt_tokens is None
               else f"usage {last.prompt_tokens}+{last.completion_tokens}")
    return f"{len(pieces) - 1} chunks, finish {last.finish_reason}, {counted}"


async def tool_round(provider: OpenAIChatProvider, model: str) -> str:
    said = []
    for choice in ("auto", "add"):
        request = LlmRequest(model, (SYSTEM, QUESTION), temperature=0, max_tokens=64,
                             tools=(ADD,), tool_choice=choice)
        answer = await provider.chat(request)
        if answer.tool_calls:
            break
        said.append(f"with tool_choice {choice!r} the model answered in text (prompt "
                    f"{answer.prompt_tokens} tokens)")
    else:
        # A server whose chat template has no tools leaves them out of the prompt.
        raise Skipped("; ".join(said) + ": no tool call even when forced; does the server's "
                      "chat template for this model support tools?")
    call = answer.tool_calls[0]
    assert call.name == "add", f"the model called {call.name!r}"
    arguments = json.loads(call.arguments)
    result = json.dumps({"sum": float(arguments.get("a", 0)) + float(arguments.get("b", 0))})
    # The second turn: the assistant's tool-call message goes back with the result.
    follow_up = LlmRequest(model, (SYSTEM, QUESTION,
                                   LlmMessage.assistant(answer.content, answer.tool_calls),
                                   LlmMessage.tool(call.id, result)),
                           temperature=0, max_tokens=64, tools=(ADD,), tool_choice="none")
    final = await provider.chat(follow_up)
    return (f"{'; '.join(said) + '; ' if said else ''}add({call.arguments}) with tool_choice "
            f"{choice!r}, finish {answer.finish_reason}; the result sent back was accepted "
            f"({final.content.strip()[:40]!r}, finish {final.finish_reason})")


async def cut(provider: OpenAIChatProvider, model: str) -> str:
    request = LlmRequest(model, (LlmMessage.user("Count from 1 to 100, one number a line."),),
                         temperature=0, max_tokens=8)
    answer = await provider.chat(request)
    assert answer.finish_reason == "length", (
        f"finish {answer.finish_reason!r} with max_tokens 8 ({usage(answer)})")
    assert answer.completion_tokens <= 8, f"{usage(answer)}: more than max_tokens 8"
    return f"finish length after {answer.completion_tokens} tokens"


async def first_model(client: httpx.AsyncClient, base_url: str, key: str) -> str:
    listed = await client.get(f"{base_url.rstrip('/')}/models",
                              headers={"Authorization": f"Bearer {key}"})
    listed.raise_for_status()
    return str(listed.json()["data"][0]["id"])


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, help="write each exchange here as JSON")
    options = parser.parse_args()
    base_url = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    key = os.environ.get("OPENAI_API_KEY", "none")
    recorder = RecordingTransport(httpx.AsyncHTTPTransport())
    async with httpx.AsyncClient(transport=recorder) as client:
        model = os.environ.get("OPENAI_MODEL") or await first_model(client, base_url, key)
        print(f"server {base_url}, model {model!r}")
        provider = OpenAIChatProvider(base_url=base_url, api_key=key, http_client=client,
                                      timeout=120.0, retry=RetryPolicy(max_attempts=1))
        checks = Checks()
        for name, check in (("plain answer", plain), ("streamed answer", streamed),
                            ("tool call and its result", tool_round),
                            ("answer cut at max_tokens", cut)):
            await checks.run(name, check, provider, model)
    if options.record is not None:
        options.record.mkdir(parents=True, exist_ok=True)
        for number, exchange in enumerate(recorder.exchanges, 1):
            name = exchange["path"].strip("/").replace("/", "-")
            path = options.record / f"{number:02d}-{name}.json"
            path.write_text(json.dumps(exchange, ensure_ascii=False, indent=2) + "\n")
        print(f"{len(recorder.exchanges)} exchanges written to {options.record}")
    print(f"{checks.failures} check(s) failed" if checks.failures else "every check held")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
