"""The CLI's status line while an agent works: what it says while a model call is retried."""

from __future__ import annotations

import io
from typing import Any, Self

from rich.console import Console

from bloge import AgentBuilder, LlmChatOperator, OperatorRegistry
from bloge.llm.providers import OpenAIChatProvider, RetryPolicy
from bloge_container.cli.progress import ProgressListener
from tests.llm.providers.conftest import OPENAI_KEY, RecordedSleeps
from tests.llm.providers.wire_payloads import (
    Script,
    json_response,
    openai_completion,
    openai_error,
)


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
