from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from bloge import (
    AgentBuilder,
    LlmChatOperator,
    LlmMessage,
    LlmStreamingChatOperator,
    OperatorRegistry,
    Token,
    ToolCall,
    ToolDefinition,
)
from bloge.llm import LlmRequest, LlmResponse
from bloge.llm.chunks import join_chunks
from bloge.llm.offline import OfflineProvider, ToolResult
from bloge.llm.tokens import HeuristicTokenEstimator


def request(*messages: LlmMessage, tools: tuple[ToolDefinition, ...] = (),
            tool_choice: str | None = None) -> LlmRequest:
    return LlmRequest("gpt-4o", messages, tools=tools, tool_choice=tool_choice)


def ask(text: str) -> tuple[LlmMessage, LlmMessage]:
    return LlmMessage.system("You are a helpful customer support agent."), LlmMessage.user(text)


async def test_an_agent_runs_on_it_whole_or_streamed() -> None:
    provider = OfflineProvider()
    registry = OperatorRegistry({"llmChat": LlmChatOperator(provider),
                                 "llmStreamingChat": LlmStreamingChatOperator(provider)})
    builder = AgentBuilder.create("offline", registry=registry).model("gpt-4o")
    whole = await builder.to_operator("offline").aexecute("hello")
    streamed = await builder.to_streaming_operator("offline").aexecute("hello")
    assert whole.content.startswith("Hello! I'm bloge's offline model")
    assert "".join(c.text for c in streamed if isinstance(c, Token)) == whole.content


async def test_a_question_calls_the_matching_tool_with_filled_arguments(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    response = await OfflineProvider().chat(
        request(*ask("How do I reset my password?"), tools=support_tools))
    assert response.finish_reason == "tool_calls"
    [call] = response.tool_calls
    assert (call.name, call.arguments) == (
        "searchKnowledgeBase", '{"query": "How do I reset my password?"}')
    assert call.id.startswith("offline_1_")


async def test_a_tool_call_says_what_it_is_doing(support_tools: tuple[ToolDefinition, ...]) -> None:
    response = await OfflineProvider().chat(
        request(*ask("I want a human agent right now."), tools=support_tools))
    assert response.content == "Let me escalate the conversation to a human support agent."


async def test_with_the_tool_results_in_it_answers_from_them(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    call = ToolCall("offline_1", "searchKnowledgeBase", '{"query": "reset password"}')
    result = json.dumps({"summary": "Reset the password here."})
    response = await OfflineProvider().chat(request(
        *ask("How do I reset my password?"), LlmMessage.assistant(tool_calls=[call]),
        LlmMessage.tool("offline_1", result), tools=support_tools))
    assert response == LlmResponse(
        content="Reset the password here.", finish_reason="stop",
        prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens)


async def test_an_answer_formatter_words_the_results(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    def cite(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        return f"{result.value['articleId']} ({result.arguments['query']})"

    call = ToolCall("offline_1", "searchKnowledgeBase", '{"query": "reset password"}')
    response = await OfflineProvider(answer_formatters=[cite]).chat(request(
        *ask("How do I reset my password?"), LlmMessage.assistant(tool_calls=[call]),
        LlmMessage.tool("offline_1", '{"articleId": "KB-1"}'), tools=support_tools))
    assert response.content == "KB-1 (reset password)"


async def test_an_argument_filler_refines_the_call(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    def shout(tool: ToolDefinition, message: str,
              arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        return {**arguments, "query": message.upper()}

    def tag(tool: ToolDefinition, message: str,
            arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        return {**arguments, "query": f"{arguments['query']} [{tool.name}]"}

    response = await OfflineProvider(argument_fillers=[shout, tag]).chat(
        request(*ask("How do I reset my password?"), tools=support_tools))
    (call,) = response.tool_calls
    assert json.loads(call.arguments) == {
        "query": "HOW DO I RESET MY PASSWORD? [searchKnowledgeBase]"}


async def test_a_failed_tool_is_never_called_again_for_the_same_message(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    call = ToolCall("offline_1", "createTicket", "{}")
    response = await OfflineProvider().chat(request(
        *ask("open a ticket"), LlmMessage.assistant(tool_calls=[call]),
        LlmMessage.tool("offline_1", "Error: tool 'createTicket' failed: boom", is_error=True),
        tools=support_tools))
    assert response.tool_calls == ()
    assert response.content.startswith(
        "The createTicket tool could not do it:\nError: tool 'createTicket' failed: boom\n")


async def test_a_new_user_message_starts_a_new_tool_round_with_a_new_call_id(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    call = ToolCall("offline_1", "searchKnowledgeBase", '{"query": "q"}')
    response = await OfflineProvider().chat(request(
        *ask("How do I reset my password?"), LlmMessage.assistant(tool_calls=[call]),
        LlmMessage.tool("offline_1", "{}"), LlmMessage.assistant("An answer."),
        LlmMessage.user("I want a human agent"), tools=support_tools))
    assert [(c.id[:len("offline_2_")], c.name) for c in response.tool_calls] == [
        ("offline_2_", "escalateToHuman")]


async def test_call_ids_differ_between_conversations_and_repeat_in_one(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    async def call_id(question: str) -> str:
        response = await OfflineProvider().chat(request(*ask(question), tools=support_tools))
        return response.tool_calls[0].id

    # A client that runs the tool finds its paused run by the call's id.
    assert await call_id("reset my password") != await call_id("reset my username")
    assert await call_id("reset my password") == await call_id("reset my password")


async def test_without_tools_it_says_what_it_is_and_to_get_a_real_model() -> None:
    response = await OfflineProvider().chat(request(*ask("Write me a poem about the sea")))
    assert response.finish_reason == "stop"
    assert response.tool_calls == ()
    assert "offline model" in response.content
    assert "not a language model" in response.content
    assert response.content.endswith(
        "For open-ended answers, switch to a real language model provider with an API key.")


async def test_the_application_says_how_to_switch_to_a_real_model(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    provider = OfflineProvider(switch_hint="Set MODEL=real.")
    for tools in ((), analyst_tools):
        response = await provider.chat(request(*ask("zxqv blorp"), tools=tools))
        assert response.content.endswith(" Set MODEL=real.")


async def test_with_no_fitting_tool_it_lists_what_the_tools_do(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    response = await OfflineProvider().chat(request(*ask("zxqv blorp"), tools=analyst_tools))
    assert response.tool_calls == ()
    assert ("I can fetch time-series metrics by name or run a SQL query against the analytics "
            "database") in response.content


async def test_a_greeting_is_answered_without_calling_a_tool(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    response = await OfflineProvider().chat(request(*ask("Hello!"), tools=support_tools))
    assert response.tool_calls == ()
    assert response.content.startswith("Hello! I'm bloge's offline model")


async def test_a_conversation_without_a_user_message_gets_a_direct_answer() -> None:
    response = await OfflineProvider().chat(request(LlmMessage.system("Be brief.")))
    assert response.finish_reason == "stop"
    assert "no user message" in response.content


async def test_tool_choice_none_answers_directly(support_tools: tuple[ToolDefinition, ...]) -> None:
    response = await OfflineProvider().chat(
        request(*ask("How do I reset my password?"), tools=support_tools, tool_choice="none"))
    assert response.tool_calls == ()


async def test_tool_choice_naming_a_tool_calls_it(support_tools: tuple[ToolDefinition, ...]) -> None:
    response = await OfflineProvider().chat(request(
        *ask("How do I reset my password?"), tools=support_tools, tool_choice="createTicket"))
    assert [c.name for c in response.tool_calls] == ["createTicket"]


async def test_tool_choice_required_calls_a_tool_even_for_small_talk(
    analyst_tools: tuple[ToolDefinition, ...],
) -> None:
    response = await OfflineProvider().chat(
        request(*ask("hi"), tools=analyst_tools, tool_choice="required"))
    assert [c.name for c in response.tool_calls] == ["fetchMetrics"]


@pytest.mark.parametrize("question", ["How do I reset my password?", "hello", "zxqv"])
async def test_the_same_request_gets_the_same_answer(
    support_tools: tuple[ToolDefinition, ...], question: str,
) -> None:
    same = request(*ask(question), tools=support_tools)
    assert await OfflineProvider().chat(same) == await OfflineProvider().chat(same)


async def test_usage_is_estimated_from_the_request_and_the_reply(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    estimator = HeuristicTokenEstimator()
    with_tools = request(*ask("hello"), tools=support_tools)
    response = await OfflineProvider(estimator=estimator).chat(with_tools)
    assert response.prompt_tokens > estimator.estimate_all(with_tools.messages)
    assert response.completion_tokens == estimator.estimate(LlmMessage.assistant(response.content))


async def test_a_custom_estimator_counts_the_usage() -> None:
    class Flat:
        def estimate(self, message: LlmMessage) -> int:
            return 10

    response = await OfflineProvider(estimator=Flat()).chat(request(*ask("hello")))
    assert (response.prompt_tokens, response.completion_tokens) == (20, 10)


async def test_the_stream_amounts_to_the_chat_answer(support_tools: tuple[ToolDefinition, ...]) -> None:
    provider = OfflineProvider()
    for question in ("How do I reset my password?", "hello"):
        asked = request(*ask(question), tools=support_tools)
        chunks = [chunk async for chunk in provider.stream_chat(asked)]
        assert join_chunks(chunks) == await provider.chat(asked)


async def test_the_stream_sends_words_then_tool_calls_then_a_done_chunk_with_usage(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    asked = request(*ask("I want a human agent right now."), tools=support_tools)
    chunks = [chunk async for chunk in OfflineProvider().stream_chat(asked)]
    *words, call, done = chunks
    assert [w.content for w in words] == ["Let ", "me ", "escalate ", "the ", "conversation ",
                                          "to ", "a ", "human ", "support ", "agent."]
    assert call.tool_call is not None
    assert call.tool_call.name == "escalateToHuman"
    assert done.done
    assert done.finish_reason == "tool_calls"
    assert done.prompt_tokens
    assert done.completion_tokens


async def test_closing_the_stream_early_is_clean() -> None:
    stream = OfflineProvider().stream_chat(request(*ask("hello there, how are you")))
    first = await anext(stream)
    await stream.aclose()
    assert first.content
    with pytest.raises(StopAsyncIteration):  # closed: the rest of the answer never comes
        await anext(stream)


FINAL_RESULT = ToolDefinition("final_result", "The final response which ends this conversation",
                              {"type": "object", "properties": {"answer": {"type": "string"}},
                               "required": ["answer"]})


async def test_with_an_output_tool_the_answer_is_given_through_it(
    support_tools: tuple[ToolDefinition, ...],
) -> None:
    tools = (*support_tools, FINAL_RESULT)
    asked = await OfflineProvider().chat(request(*ask("How do I reset my password?"),
                                                 tools=tools, tool_choice="required"))
    [call] = asked.tool_calls
    assert call.name == "searchKnowledgeBase"  # the question's tool first
    answered = await OfflineProvider().chat(request(
        *ask("How do I reset my password?"), LlmMessage.assistant(tool_calls=[call]),
        LlmMessage.tool(call.id, '{"summary": "Use the reset link."}'), tools=tools,
        tool_choice="required"))
    [final] = answered.tool_calls
    assert (final.name, final.arguments) == ("final_result", '{"answer": "Use the reset link."}')


async def test_an_output_tool_is_called_at_once_when_no_other_tool_matches() -> None:
    response = await OfflineProvider().chat(request(*ask("Name a city in France"),
                                                    tools=(FINAL_RESULT,),
                                                    tool_choice="required"))
    assert [c.name for c in response.tool_calls] == ["final_result"]
