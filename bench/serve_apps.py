"""The applications bench_serve.py loads: bloge's server, and a bare Starlette application over
the same operators. Run as ``python bench/serve_apps.py bloge|bare PORT MODEL``.

The bare application answers the same three requests as bloge's with nothing around the
operator: no guard, no run task, no body model, no metrics; a completion it answers is a
minimal ``chat.completion`` (or its chunks), enough for the load generator to read.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from bloge import (
    AgentBuilder,
    LlmChatOperator,
    LlmStreamingChatOperator,
    OperatorRegistry,
    agent_operator,
)
from bloge.agent import Token
from bloge.llm import LlmRequest, LlmResponse
from bloge.llm.chunks import response_chunks
from bloge.llm.offline import OfflineProvider
from bloge.server import ServedAgents, ServerConfig, create_app
from bloge.store import open_store


class ZeroLatency:
    """Answers at once, in a few words (streamed word by word)."""

    async def chat(self, request: LlmRequest) -> LlmResponse:
        return LlmResponse("The answer is forty-two, as ever.", prompt_tokens=12,
                           completion_tokens=8)

    async def stream_chat(self, request: LlmRequest) -> Any:
        for chunk in response_chunks(await self.chat(request)):
            yield chunk


class Holding(ZeroLatency):
    """Streams its first word, then holds the stream open until the process ends: for the
    memory of an open stream."""

    async def stream_chat(self, request: LlmRequest) -> Any:
        chunks = response_chunks(await self.chat(request))
        yield next(iter(chunks))
        await asyncio.Event().wait()


def model(name: str) -> Any:
    return {"offline": OfflineProvider, "hold": Holding}.get(name, ZeroLatency)()


def build(kind: str, model_name: str) -> Any:
    provider = model(model_name)
    registry = (OperatorRegistry.builder().register("llmChat", LlmChatOperator(provider))
                .register("llmStreamingChat", LlmStreamingChatOperator(provider)).build())
    definition = AgentBuilder.create("bench").model("gpt-4o").build()
    streaming_definition = AgentBuilder.create("bench").model("gpt-4o").streaming().build()
    store = open_store("memory://")
    if kind == "bare":
        return bare(agent_operator("bench", definition, registry, store=store),
                    agent_operator("bench", streaming_definition, registry, store=store))

    def make(agent_def: Any) -> Any:
        return agent_operator(agent_def.id, agent_def, registry, store=store)

    return create_app(ServedAgents({"bench": definition}, make), store=store,
                      config=ServerConfig(max_concurrent_runs=100_000, request_timeout=None))


def bare(whole: Any, streaming: Any) -> Starlette:
    """The same operators behind plain Starlette routes."""

    async def run(request: Request) -> JSONResponse:
        body = await request.json()
        return JSONResponse((await whole.aexecute(body["input"])).to_dict())

    async def completions(request: Request) -> Any:
        body = await request.json()
        text = body["messages"][-1]["content"]
        if body.get("stream"):
            return StreamingResponse(chunks(streaming.stream(text)),
                                     media_type="text/event-stream")
        output = await whole.aexecute(text)
        return JSONResponse({
            "id": f"chatcmpl-{output.run_id}", "object": "chat.completion",
            "created": int(time.time()), "model": "bench",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": output.content}}],
            "usage": output.usage.to_dict(),
        })

    return Starlette(routes=[Route("/agents/bench/runs", run, methods=["POST"]),
                             Route("/v1/chat/completions", completions, methods=["POST"])])


async def chunks(stream: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    async for chunk in stream:
        if isinstance(chunk, Token):
            data = {"object": "chat.completion.chunk", "model": "bench",
                    "choices": [{"index": 0, "delta": {"content": chunk.text}}]}
            yield b"data: " + json.dumps(data).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


if __name__ == "__main__":
    kind, port, model_name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    uvicorn.run(build(kind, model_name), host="127.0.0.1", port=port, log_level="warning",
                access_log=False)
