"""Stream decoding speed (issue 4): a 1,000-chunk answer through the real provider code.

Each stream is replayed by an ``httpx.MockTransport``, one read per event as a live server
sends them, and consumed through ``stream_chat``: bytes → SSE events → JSON → chunks.
Target: <= 20 µs per chunk.

Then one huge event (issue 9) through the SSE decoder alone, in the 64 KiB reads httpx makes:
the time must grow with the event's size, not its square (40 MB takes about 4 times 10 MB).

    .venv/bin/python bench/bench_sse.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable

import httpx

from bloge.llm import LlmMessage, LlmProvider, LlmRequest
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from bloge.llm.providers.sse import SseDecoder

CHUNKS = 1_000
READ = 64 * 1024
REPEAT = 7
REQUEST = LlmRequest("model", (LlmMessage.user("Tell me a long story."),))


def openai_events() -> list[bytes]:
    def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
        payload = {
            "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion.chunk",
            "created": 1741570283, "model": "gpt-4o-2024-08-06", "service_tier": "default",
            "system_fingerprint": "fp_f9f4fb6dbf",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            if usage is None else [],
            "usage": usage,
        }
        return f"data: {json.dumps(payload)}\n\n".encode()

    events = [chunk({"content": f" word{n}"}) for n in range(CHUNKS)]
    events.append(chunk({}, "stop"))
    events.append(chunk({}, usage={"prompt_tokens": 12, "completion_tokens": CHUNKS,
                                   "total_tokens": CHUNKS + 12}))
    events.append(b"data: [DONE]\n\n")
    return events


def anthropic_events() -> list[bytes]:
    def event(payload: dict) -> bytes:
        return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()

    start = {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
             "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": None,
             "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}
    events = [event({"type": "message_start", "message": start}),
              event({"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}}),
              event({"type": "ping"})]
    events += [event({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": f" word{n}"}})
               for n in range(CHUNKS)]
    events += [event({"type": "content_block_stop", "index": 0}),
               event({"type": "message_delta",
                      "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                      "usage": {"output_tokens": CHUNKS}}),
               event({"type": "message_stop"})]
    return events


def replaying(events: list[bytes]) -> httpx.MockTransport:
    async def body() -> AsyncIterator[bytes]:
        for item in events:
            yield item

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    return httpx.MockTransport(handler)


async def seconds_per_stream(make: Callable[[httpx.AsyncClient], LlmProvider],
                             events: list[bytes]) -> float:
    async with httpx.AsyncClient(transport=replaying(events)) as client:
        provider = make(client)
        runs = []
        for _ in range(REPEAT + 1):
            started = time.perf_counter()
            count = 0
            async for _chunk in provider.stream_chat(REQUEST):
                count += 1
            runs.append(time.perf_counter() - started)
            assert count == CHUNKS + 1, count
    return statistics.median(runs[1:])


def seconds_per_huge_event(size: int) -> float:
    text = "data: " + "x" * size + "\n\n"
    reads = [text[i : i + READ] for i in range(0, len(text), READ)]
    decoder = SseDecoder()
    started = time.perf_counter()
    events = [event for piece in reads for event in decoder.feed(piece)]
    elapsed = time.perf_counter() - started
    assert [len(event.data) for event in events] == [size]
    return elapsed


async def main() -> None:
    cases = {
        "OpenAI Chat Completions": (
            lambda c: OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key="sk-x",
                                         http_client=c), openai_events()),
        "Anthropic Messages": (
            lambda c: AnthropicProvider(api_key="sk-ant-x", http_client=c), anthropic_events()),
    }
    for name, (make, events) in cases.items():
        per_stream = await seconds_per_stream(make, events)
        print(f"{name:<24} {CHUNKS} chunks: {per_stream * 1e3:7.2f} ms   "
              f"{per_stream / CHUNKS * 1e6:6.2f} µs per chunk   (target <= 20 µs)")
    small, large = (seconds_per_huge_event(mb * 1_000_000) for mb in (10, 40))
    print(f"One SSE event of 10 MB: {small:.3f} s, of 40 MB: {large:.3f} s   "
          f"({large / small:.1f} times; linear is 4)")


if __name__ == "__main__":
    asyncio.run(main())
