"""``bloge.Agent``: the runtime chapter's loop, run by the engine of ``AgentLoopOperator``."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bloge import (
    Agent,
    AgentExecutionListener,
    AgentLoopOperator,
    AgentOutput,
    AgentRunError,
    BlogeUsageError,
    LlmChatOperator,
    LlmMessage,
    MaxTurnsExceededError,
    ProviderError,
    ToolDefinition,
)
from bloge.agent.facade import MAX_TURNS_REACHED, ToolUse
from bloge.llm import LlmRequest, LlmResponse, ScriptedProvider, tool_call_response
from bloge.llm.offline import OfflineProvider
from bloge.llm.providers import ClaudeProvider
from bloge.store import open_store


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def adding(a: int = 2, b: int = 3) -> ScriptedProvider:
    """A model that asks for add(a, b), then answers with what the tool said."""
    return ScriptedProvider(tool_call_response("add", json.dumps({"a": a, "b": b})), "done")


def always_add(messages: list[LlmMessage], tools: list[ToolDefinition]) -> ToolUse:
    return ToolUse("add", '{"a": 1, "b": 1}')


class FailingModel:
    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise ProviderError("the model is down", provider="test", status_code=503)

    def stream_chat(self, request: LlmRequest) -> Any:
        raise NotImplementedError


# -- the chapter's loop


def test_a_text_answer_is_returned() -> None:
    agent = Agent(ScriptedProvider("Paris."), [add])
    assert agent.run("What is the capital of France?") == "Paris."


def test_a_tool_use_runs_the_named_tool_and_feeds_its_result_back() -> None:
    model = adding(2, 3)
    assert Agent(model, [add]).run("What is 2 + 3?") == "done"
    tool_message = model.requests[1].messages[-1]
    assert (tool_message.role, tool_message.content, tool_message.is_error) == ("tool", "5", False)


def test_an_unknown_tool_feeds_an_error_back_for_the_model_to_correct() -> None:
    model = ScriptedProvider(tool_call_response("subtract", "{}"),
                             tool_call_response("add", '{"a": 2, "b": 3}', call_id="call_2"),
                             "5")
    assert Agent(model, [add]).run("What is 2 + 3?") == "5"
    error = model.requests[1].messages[-1]
    assert error.is_error
    assert error.content == "Error: unknown tool 'subtract'; available tools: add"


def test_run_returns_the_chapters_text_after_max_turns_without_a_text_answer() -> None:
    assert Agent(always_add, [add], max_turns=3).run("add forever") == (
        "[ace-agent] max turns reached")
    assert MAX_TURNS_REACHED == "[ace-agent] max turns reached"


def test_the_default_cap_is_the_chapters_eight_turns() -> None:
    turns: list[int] = []

    def counting(messages: list[LlmMessage], tools: list[ToolDefinition]) -> ToolUse:
        turns.append(len(turns) + 1)
        return ToolUse("add", '{"a": 1, "b": 1}')

    assert Agent(counting, [add]).run("add forever") == MAX_TURNS_REACHED
    assert turns == [1, 2, 3, 4, 5, 6, 7, 8]


# -- beyond the chapter: the whole output


def test_run_output_is_the_whole_agent_output() -> None:
    output = Agent(adding(2, 3), [add]).run_output("What is 2 + 3?")
    assert isinstance(output, AgentOutput)
    assert (output.content, output.exit_reason, output.turns_used) == ("done", "stop", 2)
    assert [m.role for m in output.messages] == ["user", "assistant", "tool", "assistant"]
    assert output.usage.llm_calls == 2


def test_run_output_raises_max_turns_exceeded_with_a_checkpoint_to_resume_from() -> None:
    agent = Agent(always_add, [add], max_turns=2)
    with pytest.raises(MaxTurnsExceededError) as raised:
        agent.run_output("add forever")
    assert raised.value.max_turns == 2
    assert raised.value.checkpoint.turn_count == 2


def test_a_failed_run_raises_agent_run_error_caused_by_the_failure() -> None:
    with pytest.raises(AgentRunError) as raised:
        Agent(FailingModel()).run("hello")
    assert isinstance(raised.value.__cause__, ProviderError)


# -- one engine


def test_an_agent_runs_on_an_agent_loop_operator_with_llm_chat_over_its_provider() -> None:
    model = ScriptedProvider("hi")
    agent = Agent(model, [add], max_turns=4, name="calculator")
    operator = agent.operator
    assert isinstance(operator, AgentLoopOperator)
    assert operator.agent_def.id == "calculator"
    assert operator.agent_def.max_turns == 4
    assert [tool.name for tool in operator.agent_def.tools] == ["add"]
    chat = operator.registry.get("llmChat")
    assert isinstance(chat, LlmChatOperator)
    assert chat.provider is model


def test_each_agent_has_a_registry_of_its_own() -> None:
    first, second = Agent(ScriptedProvider(), [add]), Agent(ScriptedProvider())
    assert first.operator.registry is not second.operator.registry
    assert "tool:add" in first.operator.registry
    assert "tool:add" not in second.operator.registry


def test_listeners_see_the_loops_callbacks() -> None:
    class Turns(AgentExecutionListener):
        def __init__(self) -> None:
            self.exits: list[str] = []

        def on_agent_loop_exited(self, context: Any, payload: Any) -> None:
            self.exits.append(payload.exit_reason)

    listener = Turns()
    Agent(adding(), [add], listeners=[listener]).run("2 + 3?")
    assert listener.exits == ["stop"]


# -- runs


def test_each_run_is_a_new_conversation() -> None:
    model = ScriptedProvider("one", "two")
    agent = Agent(model)
    agent.run("first")
    agent.run("second")
    assert [m.content for m in model.requests[1].messages] == ["second"]


def test_the_system_prompt_starts_every_conversation() -> None:
    model = ScriptedProvider("hi")
    Agent(model, system_prompt="Be brief.").run("hello")
    assert [(m.role, m.content) for m in model.requests[0].messages] == [
        ("system", "Be brief."), ("user", "hello")]


def test_run_works_any_number_of_times_from_many_threads() -> None:
    def echo(messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
        return messages[-1].content.upper()

    agent = Agent(echo)
    questions = [f"question {n}" for n in range(40)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(agent.run, questions))
    assert answers == [q.upper() for q in questions]


async def test_run_inside_a_running_event_loop_is_a_clear_usage_error() -> None:
    agent = Agent(ScriptedProvider("hi"))
    with pytest.raises(BlogeUsageError, match=r"run\(\) was called inside a running event loop; "
                                              r"await arun\(\) instead"):
        agent.run("hello")
    with pytest.raises(BlogeUsageError, match=r"await arun_output\(\) instead"):
        agent.run_output("hello")


async def test_arun_answers_inside_an_event_loop() -> None:
    assert await Agent(adding(), [add]).arun("2 + 3?") == "done"
    assert await Agent(always_add, [add], max_turns=1).arun("add forever") == MAX_TURNS_REACHED


# -- models


def test_the_model_keyword_names_the_model_of_each_request() -> None:
    model = ScriptedProvider("hi")
    Agent(model, model="gpt-4o").run("hello")
    assert model.requests[0].model == "gpt-4o"


def test_the_model_defaults_to_the_providers_own_claude_provider() -> None:
    sent: list[dict[str, Any]] = []

    async def transport(body: dict[str, Any]) -> dict[str, Any]:
        sent.append(body)
        return {"content": [{"type": "text", "text": "Hello from Claude."}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 4}}

    provider = ClaudeProvider(transport, model="claude-sonnet-4-5")
    assert Agent(provider, [add]).run("hello") == "Hello from Claude."
    assert sent[0]["model"] == "claude-sonnet-4-5"
    assert [tool["name"] for tool in sent[0]["tools"]] == ["add"]


def test_the_offline_model_uses_a_function_tool() -> None:
    def lookup_order(order_id: str) -> str:
        """Look up the status of an order by its order id."""
        return f"order {order_id} has shipped"

    output = Agent(OfflineProvider(), [lookup_order]).run_output("Where is order A-1001?")
    assert "order A-1001 has shipped" in [m.content for m in output.messages if m.role == "tool"]


def test_a_chat_model_object_gets_the_messages_and_the_tool_definitions() -> None:
    seen: list[tuple[list[LlmMessage], list[ToolDefinition]]] = []

    class EchoLlm:
        def chat(self, messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
            seen.append((messages, tools))
            return f"agent says: {messages[0].content}"

    assert Agent(EchoLlm(), [add]).run("hello") == "agent says: hello"
    messages, tools = seen[0]
    assert [(m.role, m.content) for m in messages] == [("user", "hello")]
    assert [(t.name, t.description) for t in tools] == [("add", "Add two integers.")]


def test_a_sync_chat_model_runs_off_the_event_loop_thread() -> None:
    threads: list[str] = []

    def model(messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
        threads.append(threading.current_thread().name)
        return "hi"

    Agent(model).run("hello")
    assert threads[0].startswith("bloge-worker")


def test_an_async_chat_function_is_awaited() -> None:
    async def model(messages: list[LlmMessage], tools: list[ToolDefinition]) -> str:
        return "awaited"

    assert Agent(model).run("hello") == "awaited"


def test_each_tool_round_of_a_chat_model_gets_a_call_id_of_its_own() -> None:
    def model(messages: list[LlmMessage], tools: list[ToolDefinition]) -> str | ToolUse:
        rounds = sum(1 for m in messages if m.role == "tool")
        return ToolUse("add", '{"a": 1, "b": 2}') if rounds < 2 else "3 and 3"

    output = Agent(model, [add]).run_output("add twice")
    ids = [m.tool_call_id for m in output.messages if m.role == "tool"]
    assert ids == ["call_1", "call_2"]


def test_a_chat_model_answer_of_another_type_fails_the_run_saying_what_to_return() -> None:
    def model(messages: list[LlmMessage], tools: list[ToolDefinition]) -> Any:
        return 42

    with pytest.raises(AgentRunError, match=r"answered with type int; return a str \(the answer\), "
                                            r"ToolUse\(name, args\)"):
        Agent(model).run("hello")


def test_with_a_store_a_thread_continues_in_an_agent_made_later(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bloge.db'}"
    first = Agent(ScriptedProvider("Use Settings > Security."), store=open_store(url))
    assert first.run("How do I reset my password?", thread_id="customer-42") == (
        "Use Settings > Security.")
    # As after a restart: another Agent, another store object on the same file.
    later = Agent(ScriptedProvider("The link is in your inbox."), store=open_store(url))
    output = later.run_output("Where is the confirmation link?", thread_id="customer-42")
    assert [m.content for m in output.messages] == [
        "How do I reset my password?", "Use Settings > Security.",
        "Where is the confirmation link?", "The link is in your inbox."]
    assert output.thread_id == "customer-42"
    assert output.run_id is not None


def test_a_thread_id_without_a_store_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="a thread_id or run_id needs a store"):
        Agent(ScriptedProvider("hi")).run("hello", thread_id="t")


def test_a_tool_use_with_a_dict_of_args_fails_the_run_saying_args_is_json_text() -> None:
    def model(messages: list[LlmMessage], tools: list[ToolDefinition]) -> Any:
        return ToolUse("add", {"a": 1, "b": 2})  # type: ignore[arg-type]  # the mistake under test

    with pytest.raises(AgentRunError, match=r"answered ToolUse\('add', …\) with args of type "
                                            r"dict; args is the JSON text of the arguments"):
        Agent(model, [add]).run("hello")


def test_an_llm_that_is_no_model_is_a_usage_error() -> None:
    with pytest.raises(BlogeUsageError, match="an Agent's llm must be a bloge LlmProvider"):
        Agent("gpt-4o")  # type: ignore[arg-type]  # the mistake under test


def test_bad_agent_settings_are_usage_errors() -> None:
    with pytest.raises(BlogeUsageError, match="max_turns must be at least 1, got 0"):
        Agent(ScriptedProvider(), max_turns=0)
