"""The loop's turns, exits, errors, inputs and checkpoints."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bloge import (
    Agent,
    AgentCheckpoint,
    AgentInput,
    AgentRunError,
    BlogeUsageError,
    LlmMessage,
    MaxTurnsExceededError,
    OperatorContext,
    OperatorRegistry,
    ProviderError,
    UnknownOperatorError,
)
from bloge.agent import AgentBuilder
from bloge.llm import (
    FunctionProvider,
    ImagePart,
    LlmRequest,
    LlmResponse,
    TextPart,
    ToolCall,
)

from .helpers import Recorder, agent_with, calls, scripted


def test_an_answer_without_tool_calls_ends_the_loop_with_stop() -> None:
    output = agent_with(scripted(LlmResponse("Hi!", prompt_tokens=7, completion_tokens=2))).execute("Hello")
    assert (output.content, output.finish_reason, output.exit_reason) == ("Hi!", "stop", "stop")
    assert output.turns_used == 1
    assert (output.usage.llm_calls, output.usage.total_tokens) == (1, 9)


def test_the_provider_finish_reason_is_kept_unchanged() -> None:
    output = agent_with(scripted(LlmResponse("cut off", finish_reason="length"))).execute("x")
    assert (output.finish_reason, output.exit_reason) == ("length", "stop")


def test_the_system_prompt_model_temperature_and_tools_reach_every_call() -> None:
    provider = scripted(calls(("echo", {"text": "a"})), "done")
    agent_with(provider, configure=lambda b: b.system_prompt("Be terse.").temperature(0.3)).execute("go")
    for request in provider.requests:
        assert request.messages[0] == LlmMessage.system("Be terse.")
        assert (request.model, request.temperature) == ("test-model", 0.3)
        assert [tool.name for tool in request.tools] == ["echo"]


def test_the_transcript_holds_every_message_of_the_run() -> None:
    output = agent_with(scripted(calls(("echo", {"text": "a"})), "done")).execute("go")
    assert [m.role for m in output.messages] == ["user", "assistant", "tool", "assistant"]
    assert output.messages[2].content == '{"echo":{"text":"a"}}'


def test_tool_results_are_keyed_by_call_id_and_hold_raw_operator_results() -> None:
    provider = scripted(calls(("echo", {"text": "a"}, "id-a"), ("echo", {"text": "b"}, "id-b")), "ok")
    output = agent_with(provider).execute("go")
    assert output.tool_results == {"id-a": {"echo": {"text": "a"}}, "id-b": {"echo": {"text": "b"}}}


def test_exit_condition_sees_tool_results_by_tool_name_and_the_turn() -> None:
    provider = scripted(calls(("echo", {"text": "stop-now"})), "never")
    agent = agent_with(provider, configure=lambda b: b.exit_condition(
        'tool_results.echo.echo.text == "stop-now" && turn == 1 && len(messages) == 3'))
    output = agent.execute("go")
    assert output.exit_reason == "exit_condition"
    assert output.finish_reason == "tool_calls"
    assert len(provider.requests) == 1


def test_exit_condition_is_not_consulted_when_the_model_answers_in_text() -> None:
    agent = agent_with(scripted("plain answer"), configure=lambda b: b.exit_condition("1 / 0 == 1"))
    assert agent.execute("go").exit_reason == "stop"


def test_max_turns_raises_with_a_checkpoint_after_the_loop_exited_listener() -> None:
    recorder = Recorder()
    provider = scripted(*[calls(("echo", {"text": str(i)})) for i in range(3)])
    agent = agent_with(provider, listeners=[recorder], configure=lambda b: b.max_turns(2))
    with pytest.raises(MaxTurnsExceededError) as caught:
        agent.execute("loop forever")
    error = caught.value
    assert error.checkpoint.turn_count == 2
    assert len(provider.requests) == 2
    assert [m.role for m in error.checkpoint.conversation] == [
        "user", "assistant", "tool", "assistant", "tool"]
    assert recorder.names()[-1] == "loop_exited"
    assert recorder.payloads("loop_exited")[0].exit_reason == "max_turns"


def test_resume_with_a_higher_cap_continues_the_turn_count_to_a_normal_answer() -> None:
    provider = scripted(calls(("echo", {"text": "1"})), calls(("echo", {"text": "2"})), "finally")
    capped = agent_with(provider, configure=lambda b: b.max_turns(1))
    with pytest.raises(MaxTurnsExceededError) as caught:
        capped.execute("work")
    restored = AgentCheckpoint.from_json(caught.value.checkpoint.to_json())
    raised = (AgentBuilder.from_def(capped.agent_def, registry=capped.registry)
              .max_turns(5).to_operator("testAgent"))
    output = raised.resume(restored)
    assert (output.content, output.turns_used) == ("finally", 3)
    assert output.usage.llm_calls == 3
    assert [m.role for m in provider.requests[-1].messages] == [
        "user", "assistant", "tool", "assistant", "tool"]


def test_resume_can_add_a_follow_up_message() -> None:
    provider = scripted("first answer", "second answer")
    agent = agent_with(provider)
    first = agent.execute("question one")
    second = agent.resume(first.checkpoint, "question two")
    assert second.content == "second answer"
    assert [m.content for m in provider.requests[1].messages] == [
        "question one", "first answer", "question two"]
    assert second.turns_used == 2


def test_a_checkpoint_of_another_agent_is_refused() -> None:
    checkpoint = AgentCheckpoint((LlmMessage.user("x"),), 1, {}, agent_id="someoneElse")
    with pytest.raises(BlogeUsageError, match="checkpoint of agent 'someoneElse'"):
        agent_with(scripted("x")).resume(checkpoint)


def test_a_missing_chat_operator_is_a_clear_error_at_the_first_turn() -> None:
    agent = AgentBuilder.create("a").model("m").to_operator("a", OperatorRegistry({"x": lambda i: i}))
    with pytest.raises(UnknownOperatorError, match="no chat operator registered under 'llmChat'"):
        agent.execute("hello")


def test_a_provider_failure_ends_the_run_with_error_and_a_checkpoint() -> None:
    recorder = Recorder()

    def failing(request: LlmRequest) -> LlmResponse:
        if len(failing_provider.requests) > 1:
            raise ProviderError("rate limited", provider="test", status_code=429)
        return calls(("echo", {"text": "a"}))

    failing_provider = FunctionProvider(failing)
    agent = agent_with(failing_provider, listeners=[recorder])
    with pytest.raises(AgentRunError) as caught:
        agent.execute("go")
    assert isinstance(caught.value.__cause__, ProviderError)
    assert caught.value.exit_reason == "error"
    # Turn 2's model call failed: one turn is done, and a resume makes turn 2 again.
    assert caught.value.checkpoint.turn_count == 1
    assert "failed in turn 2" in str(caught.value)
    assert "test (HTTP 429): rate limited" in str(caught.value)
    [exited] = recorder.payloads("loop_exited")
    assert (exited.exit_reason, exited.total_turns) == ("error", 1)


@pytest.mark.parametrize("stop", ["provider", "budget"])
def test_a_turn_stopped_before_its_answer_is_made_again_by_a_resume(stop: str) -> None:
    # max_turns = 1, and the one turn never got its answer: a resume makes it, rather than
    # stop at once for want of turns.
    answered = FunctionProvider(lambda request: LlmResponse("done", "stop", 5, 1))

    def failing(request: LlmRequest) -> LlmResponse:
        raise ProviderError("overloaded", provider="test", status_code=529)

    lines = "max_turns = 1" + ("\n  budget { model_calls = 0 }" if stop == "budget" else "")
    source = f'agent a {{\n  model = "gpt-4o"\n  {lines}\n}}'
    agent = Agent.from_dsl(source, llm=FunctionProvider(failing) if stop == "provider"
                           else answered)
    with pytest.raises(AgentRunError) as caught:
        agent.run("go")
    checkpoint = caught.value.checkpoint
    assert (checkpoint.turn_count, checkpoint.usage.llm_calls) == (0, 0)
    output = Agent.from_dsl(source.replace("\n  budget { model_calls = 0 }", ""),
                            llm=answered).resume(checkpoint)
    assert (output.content, output.turns_used) == ("done", 1)


async def test_cancelling_a_run_reports_cancelled_and_propagates() -> None:
    recorder = Recorder()
    started = asyncio.Event()

    async def slow(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(agent_with(FunctionProvider(slow), listeners=[recorder]).aexecute("x"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert recorder.payloads("loop_exited")[0].exit_reason == "cancelled"


async def test_execute_inside_a_running_loop_says_to_await_aexecute() -> None:
    with pytest.raises(BlogeUsageError, match=r"await aexecute\(\) instead"):
        agent_with(scripted("x")).execute("hello")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hello", [LlmMessage.user("hello")]),
        (LlmMessage.system("s"), [LlmMessage.system("s")]),
        ({"role": "user", "content": "d"}, [LlmMessage.user("d")]),
        ({"messages": ["a", {"role": "assistant", "content": "b"}]},
         [LlmMessage.user("a"), LlmMessage.assistant("b")]),
        (["a", LlmMessage.user("b")], [LlmMessage.user("a"), LlmMessage.user("b")]),
    ],
)
def test_agent_input_coerces_strings_messages_dicts_and_lists(value: object, expected: list[LlmMessage]) -> None:
    assert list(AgentInput.of(value).messages) == expected


@pytest.mark.parametrize(("value", "message"), [
    (42, "cannot use a int as agent input"),
    ([], "at least one message"),
    ({"role": "wizard"}, "invalid message: message role must be one of"),
])
def test_agent_input_rejects_what_it_cannot_use(value: object, message: str) -> None:
    with pytest.raises(BlogeUsageError, match=message):
        AgentInput.of(value)


@pytest.mark.parametrize(("message", "problem"), [
    ({"role": "user"}, 'a user message needs "content"'),
    ({"role": "user", "content": None}, 'a user message needs "content"'),
    ({"role": "system"}, 'a system message needs "content"'),
    ({"role": "assistant"}, 'an assistant message needs "content" or "tool_calls"'),
    ({"role": "tool", "content": "42"}, 'a tool message needs "tool_call_id"'),
    ({"role": "tool", "tool_call_id": "c1"}, 'a tool message needs "content"'),
    ({"role": "user", "content": ["hi"]}, "message content must be a string, got list"),
    ({"role": "assistant", "tool_calls": [{"id": "c1"}]},
     r"tool_calls\[0\] must be an object with a string id and name"),
    ({"role": "user", "parts": ["hi"]}, r"parts\[0\] must be an object"),
])
def test_agent_input_refuses_a_message_a_model_cannot_be_sent_naming_its_index(
        message: dict[str, Any], problem: str) -> None:
    with pytest.raises(BlogeUsageError, match=rf"invalid message \(item 1\): {problem}"):
        AgentInput.of([{"role": "user", "content": "hi"}, message])


@pytest.mark.parametrize("message", [
    LlmMessage.user(""), LlmMessage.user([TextPart("look"), ImagePart("https://x/cat.png")]),
    LlmMessage.system("s"), LlmMessage.assistant(""),
    LlmMessage.assistant(tool_calls=[ToolCall("c1", "echo", "{}")]),
    LlmMessage.tool("c1", ""), LlmMessage.tool("c1", "boom", is_error=True)])
def test_agent_input_takes_every_message_in_its_dict_form(message: LlmMessage) -> None:
    assert AgentInput.of([message.to_dict()]).messages == (message,)


def test_an_assistant_message_with_tool_calls_needs_no_content() -> None:
    call = {"id": "c1", "name": "echo", "arguments": "{}"}
    (message,) = AgentInput.of([{"role": "assistant", "tool_calls": [call]}]).messages
    assert (message.content, message.tool_calls) == ("", (ToolCall("c1", "echo", "{}"),))


def test_a_checkpoint_round_trips_through_json() -> None:
    output = agent_with(scripted(calls(("echo", {"text": "a"})), "done")).execute("go")
    restored = AgentCheckpoint.from_json(output.checkpoint.to_json())
    assert restored == output.checkpoint


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "not valid JSON"),
    ('{"schema": "other/9"}', "not a bloge agent checkpoint"),
    ("[1, 2]", (r"not a bloge agent checkpoint: the JSON is a list, not an object with "
               r"\"schema\": 'bloge.agent.checkpoint/1'")),
    ("null", "not a bloge agent checkpoint: the JSON is null"),
    ('{"schema": "bloge.agent.checkpoint/1"}', "checkpoint is malformed"),
])
def test_a_bad_checkpoint_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(BlogeUsageError, match=message):
        AgentCheckpoint.from_json(text)


def test_an_agent_operator_is_itself_an_operator_in_a_registry() -> None:
    agent = agent_with(scripted("nested answer"))
    registry = OperatorRegistry({"support": agent})
    output = asyncio.run(registry.bound("support").invoke("hi", OperatorContext.root()))
    assert output.content == "nested answer"
