"""The CLI's status line while an agent works: what it says while a model call is retried."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Self

import httpx
from rich.console import Console

from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy
from bloge_container.cli.progress import ProgressListener
from tests.cli.conftest import bloge
from tests.llm.providers.conftest import OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import (
    Script,
    json_response,
    openai_completion,
    openai_error,
    openai_sse,
    openai_stream,
    sse_response,
)
from tests.local_server import LocalServer


class RecordingConsole(Console):
    """A terminal whose status line keeps every text it was given (rich itself only draws
    the last one it had time to)."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), force_terminal=True)
        self.said: list[str] = []

    def status(self, status: Any, **_: Any) -> Any:
        console = self

        class Line:
            def __enter__(self) -> Self:
                console.said.append(str(status))
                return self

            def __exit__(self, *_: object) -> None:
                pass

            def update(self, text: str) -> None:
                console.said.append(text)

        return Line()


async def test_the_status_line_says_a_model_call_waits_to_be_retried_and_why() -> None:
    script = Script([json_response(429, openai_error("Rate limited", "rate_limit_exceeded"),
                                   {"retry-after": "2"}),
                     json_response(200, openai_completion("Hello"))])
    provider = OpenAIChatProvider(base_url="https://api.openai.com/v1", api_key=OPENAI_KEY,
                                  http_client=script.client(), retry=RetryPolicy(jitter=False),
                                  sleep=RecordedSleeps())
    tracker = ProgressListener()
    agent = (AgentBuilder.create("a", registry=OperatorRegistry().register(
        "llmChat", LlmChatOperator(provider))).model("gpt-4o")
        .to_operator("a", listeners=[tracker]))
    console = RecordingConsole()
    with tracker.showing(console):
        output = await agent.aexecute("Hi")
    assert output.content == "Hello"
    assert console.said[:3] == ["Starting…", "Turn 1: asking the model…",
                                "Turn 1: retrying in 2 s: HTTP 429 (attempt 2 of 4)…"]


def test_a_streamed_run_prints_a_line_while_a_model_call_waits_to_be_retried(app: Path) -> None:
    replies = [json_response(429, openai_error("Rate limited", "rate_limit_exceeded"),
                             {"retry-after-ms": "0"}),
               sse_response(openai_sse(openai_stream(["Hello"])))]

    def answer(request: httpx.Request) -> httpx.Response:
        return replies.pop(0)

    with LocalServer(answer) as server:
        result = bloge("run", "customerSupport", "Hi", "--stream", cwd=app, env={
            "BLOGE_LLM__PROVIDER": "openai", "OPENAI_BASE_URL": server.url("/v1"),
            "OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.stderr
    assert "… retrying in 0 s: HTTP 429 (attempt 2 of 4)" in result.stderr.splitlines()
    assert result.stdout.strip() == "Hello"
