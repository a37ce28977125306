"""Small builders shared by the runtime tests."""

from __future__ import annotations

import json
from typing import Any

from bloge import (
    AgentBuilder,
    AgentExecutionListener,
    AgentLoopOperator,
    LlmChatOperator,
    OperatorRegistry,
)
from bloge.llm import LlmProvider, LlmResponse, ScriptedProvider, ToolCall


def calls(*specs: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]) -> LlmResponse:
    """A tool-calls response: ("name", {args}) or ("name", {args}, "id") per call."""
    made = []
    for index, spec in enumerate(specs, start=1):
        name, arguments = spec[0], spec[1]
        call_id = spec[2] if len(spec) == 3 else f"call_{index}"
        made.append(ToolCall(call_id, name, json.dumps(arguments)))
    return LlmResponse(finish_reason="tool_calls", tool_calls=tuple(made))


def echo(input: dict[str, Any]) -> dict[str, Any]:
    return {"echo": dict(input)}


def agent_with(
    provider: LlmProvider,
    *,
    tools: dict[str, object] | None = None,
    listeners: list[AgentExecutionListener] | None = None,
    configure: Any = None,
) -> AgentLoopOperator:
    """An agent with tool ``echo`` (input {text}) unless ``tools`` says otherwise."""
    operators: dict[str, object] = {"Echo": echo, **(tools or {})}
    registry = OperatorRegistry({**operators, "llmChat": LlmChatOperator(provider)})
    builder = AgentBuilder.create("tester", registry=registry).model("test-model")
    if tools is None:
        builder.tool("echo", "Echo", description="Echo text", input={"text": "tool_args.text"})
    if configure is not None:
        configure(builder)
    return builder.to_operator("testAgent", listeners=listeners or [])


class Recorder(AgentExecutionListener):
    """Records (callback name, context, payload) for every callback."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, Any]] = []

    def on_agent_turn_started(self, context: Any, payload: Any) -> None:
        self.events.append(("turn_started", context, payload))

    def on_agent_llm_called(self, context: Any, payload: Any) -> None:
        self.events.append(("llm_called", context, payload))

    def on_agent_tool_dispatched(self, context: Any, payload: Any) -> None:
        self.events.append(("tool_dispatched", context, payload))

    def on_agent_tool_completed(self, context: Any, payload: Any) -> None:
        self.events.append(("tool_completed", context, payload))

    def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
        self.events.append(("loop_exited", context, payload))

    def names(self) -> list[str]:
        return [name for name, _, _ in self.events]

    def payloads(self, name: str) -> list[Any]:
        return [payload for event, _, payload in self.events if event == name]


def scripted(*answers: Any) -> ScriptedProvider:
    return ScriptedProvider(*answers)
