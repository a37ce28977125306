"""Listener callbacks: order, payloads, context, and a raising listener skipped."""

from __future__ import annotations

import logging

import pytest

from bloge import (
    AgentCallbackContext,
    AgentExecutionListener,
    AgentOutput,
    LlmCalledPayload,
    LoopExitedPayload,
    OperatorContext,
    ToolCompletedPayload,
    ToolDispatchedPayload,
    TurnStartedPayload,
)
from bloge.llm import LlmResponse

from .helpers import Recorder, agent_with, calls, scripted


def two_turn_run(*listeners: AgentExecutionListener) -> AgentOutput:
    provider = scripted(
        LlmResponse(finish_reason="tool_calls", prompt_tokens=11, completion_tokens=7,
                    tool_calls=calls(("echo", {"text": "a"}, "id-a"),
                                     ("echo", {"text": "b"}, "id-b")).tool_calls),
        LlmResponse("done", prompt_tokens=20, completion_tokens=3),
    )
    ctx = OperatorContext.root(execution_id="exec-42", graph_name="supportFlow").child(node_id="agentNode")
    return agent_with(provider, listeners=list(listeners)).execute("go", ctx)


def test_callbacks_come_in_the_documented_order() -> None:
    recorder = Recorder()
    two_turn_run(recorder)
    assert recorder.names() == [
        "turn_started", "llm_called", "tool_dispatched", "tool_dispatched",
        "tool_completed", "tool_completed",
        "turn_started", "llm_called", "loop_exited",
    ]


def test_every_callback_carries_the_callback_context() -> None:
    recorder = Recorder()
    two_turn_run(recorder)
    contexts = {context for _, context, _ in recorder.events}
    assert contexts == {AgentCallbackContext("exec-42", "supportFlow", "agentNode", "testAgent")}


def test_payloads_carry_every_cheat_sheet_field() -> None:
    recorder = Recorder()
    two_turn_run(recorder)
    assert recorder.payloads("turn_started") == [TurnStartedPayload(1, 1), TurnStartedPayload(2, 4)]
    first_call, second_call = recorder.payloads("llm_called")
    assert isinstance(first_call, LlmCalledPayload)
    assert (first_call.turn_number, first_call.model, first_call.prompt_tokens,
            first_call.completion_tokens, first_call.finish_reason) == (1, "test-model", 11, 7, "tool_calls")
    assert first_call.latency_ms >= 0
    assert second_call.finish_reason == "stop"
    assert recorder.payloads("tool_dispatched") == [
        ToolDispatchedPayload(1, "id-a", "echo", '{"text": "a"}'),
        ToolDispatchedPayload(1, "id-b", "echo", '{"text": "b"}'),
    ]
    completed = recorder.payloads("tool_completed")
    assert all(isinstance(p, ToolCompletedPayload) and p.success for p in completed)
    assert sorted(p.result_summary for p in completed) == ['{"echo":{"text":"a"}}', '{"echo":{"text":"b"}}']
    (exited,) = recorder.payloads("loop_exited")
    assert isinstance(exited, LoopExitedPayload)
    assert (exited.total_turns, exited.total_llm_calls, exited.total_llm_tokens, exited.exit_reason) == (
        2, 2, 41, "stop")
    assert exited.total_latency_ms >= first_call.latency_ms


def test_a_raising_listener_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(AgentExecutionListener):
        def on_agent_llm_called(self, context: AgentCallbackContext,
                                payload: LlmCalledPayload) -> None:
            raise RuntimeError("listener bug")

    recorder = Recorder()
    with caplog.at_level(logging.WARNING, logger="bloge.agent.listeners"):
        output = two_turn_run(Broken(), recorder)
    assert output.content == "done"
    assert recorder.names().count("llm_called") == 2
    assert any("raised in on_agent_llm_called" in r.getMessage() for r in caplog.records)


def test_a_listener_may_override_only_some_callbacks() -> None:
    class OnlyExits(AgentExecutionListener):
        def __init__(self) -> None:
            self.reasons: list[str] = []

        def on_agent_loop_exited(self, context: AgentCallbackContext,
                                 payload: LoopExitedPayload) -> None:
            self.reasons.append(payload.exit_reason)

    only = OnlyExits()
    two_turn_run(only)
    assert only.reasons == ["stop"]


def test_each_run_without_a_context_gets_its_own_execution_id() -> None:
    recorder = Recorder()
    agent = agent_with(scripted("one", "two"), listeners=[recorder])
    agent.execute("a")
    agent.execute("b")
    ids = {context.execution_id for name, context, _ in recorder.events if name == "loop_exited"}
    assert len(ids) == 2
