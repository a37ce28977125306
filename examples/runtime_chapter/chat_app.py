"""The runtime chapter's example: ``chat_agent`` answers ``POST /chat`` on 127.0.0.1:8080.

    .venv/bin/python -m examples.runtime_chapter.chat_app              # or --port 9000, PORT=9000
    curl -d 'hello' http://127.0.0.1:8080/chat                         # agent says: hello
    curl 'http://127.0.0.1:8080/chat?q=hello'                          # the same, from ?q=

``EchoLlm`` is the chapter's mock model; swap in a real one with one line, say
``Agent(ClaudeProvider(), [AddTool()])`` (reads ``ANTHROPIC_API_KEY``), and the agent uses
``AddTool`` when a question needs it.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from bloge import Agent, LlmMessage, ToolDefinition


class EchoLlm:
    """The chapter's mock model: it answers with the first message of the conversation."""

    def chat(self, messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
        return f"agent says: {messages[0].content}"


class AddTool:
    """The chapter's tool, with the schema the chapter could not give it: two integers."""

    name = "add"
    description = "Add two integers a and b."
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }

    def call(self, args: str) -> str:
        numbers = json.loads(args)
        return str(numbers["a"] + numbers["b"])


chat_agent = Agent(EchoLlm(), [AddTool()])
app = chat_agent.as_handler(path="/chat")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve :data:`app` with uvicorn until Ctrl-C."""
    parser = argparse.ArgumentParser(description="The runtime chapter's POST /chat agent.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=os.environ.get("PORT", "8080"),
                        help="default: $PORT, else 8080")
    options = parser.parse_args(argv)
    try:
        import uvicorn  # noqa: PLC0415 -- an optional dependency, asked for when it is used
    except ImportError:
        parser.exit(2, "this example serves with uvicorn: .venv/bin/pip install uvicorn\n")
    uvicorn.run(app, host=options.host, port=options.port)


if __name__ == "__main__":
    main()
