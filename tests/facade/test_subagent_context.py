"""What a sub-agent's run starts from: the question alone (``context = "fresh"``), or its
caller's conversation, then the question (``context = "parent"``)."""

from __future__ import annotations

import pytest

from bloge import (
    Agent,
    AgentBuilder,
    LlmChatOperator,
    OperatorRegistry,
)
from bloge.agent.caller_context import opening_of
from bloge.agent.subagent import CHILDREN_ELSEWHERE, ChildRunRequested, SubAgentError
from bloge.core.context import OperatorContext
from bloge.llm import (
    LLM_CHAT,
    FunctionProvider,
    LlmMessage,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
)


def asking(text: str, *calls: ToolCall) -> LlmResponse:
    return LlmResponse(text, "tool_calls", tool_calls=calls)


def recording(requests: list[LlmRequest], answer: str = "Paris.") -> FunctionProvider:
    def answer_with(request: LlmRequest) -> LlmResponse:
        requests.append(request)
        return LlmResponse(answer)

    return FunctionProvider(answer_with)


def seen(request: LlmRequest) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


ASK = ToolCall("call_1", "researcher", '{"input": "Which capital?"}')


def test_a_parent_context_child_starts_from_the_callers_conversation() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher", system_prompt="You research.")
    triage = Agent(ScriptedProvider(asking("Let me ask.", ASK), "It is Paris."),
                   [researcher.as_tool(context="parent")], name="triage",
                   system_prompt="You triage.")
    assert triage.run("France, please.") == "It is Paris."
    (request,) = requests
    assert seen(request) == [("system", "You research."), ("user", "France, please."),
                             ("assistant", "Let me ask."), ("user", "Which capital?")]


def test_the_calls_still_waiting_are_left_out_of_the_childs_conversation() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher")
    other = ToolCall("call_2", "clock", "{}")
    triage = Agent(ScriptedProvider(asking("", ASK, other), "done"),
                   [researcher.as_tool(context="parent"), clock], name="triage")
    triage.run("France, please.")
    (request,) = requests
    assert seen(request) == [("user", "France, please."), ("user", "Which capital?")]
    assert not any(m.tool_calls or m.role == "tool" for m in request.messages)


def clock() -> str:
    """The time."""
    return "noon"


def test_a_fresh_child_starts_from_the_question_alone() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher")
    triage = Agent(ScriptedProvider(asking("Let me ask.", ASK), "ok"),
                   [researcher.as_tool()], name="triage")
    triage.run("France, please.")
    assert seen(requests[0]) == [("user", "Which capital?")]


def test_earlier_rounds_reach_the_child_with_their_results() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher")
    first = ToolCall("call_0", "clock", "{}")
    triage = Agent(ScriptedProvider(asking("", first), asking("", ASK), "ok"),
                   [researcher.as_tool(context="parent"), clock], name="triage")
    triage.run("When and where?")
    messages = requests[0].messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[1].tool_calls == (first,)
    assert (messages[2].tool_call_id, messages[2].content) == ("call_0", "noon")


def test_the_opening_drops_calls_without_results_and_results_without_calls() -> None:
    asked = ToolCall("a", "t", "{}")
    lost = ToolCall("b", "t", "{}")
    conversation = [LlmMessage.system("prompt"), LlmMessage.user("hi"),
                    LlmMessage.assistant("thinking", [asked, lost]), LlmMessage.tool("a", "1"),
                    LlmMessage.tool("z", "stray"), LlmMessage.assistant("", [ASK])]
    opening = opening_of(conversation, "q")
    assert [(m.role, m.content) for m in opening] == [
        ("user", "hi"), ("assistant", "thinking"), ("tool", "1"), ("user", "q")]
    assert opening[1].tool_calls == (asked,)


def test_a_call_id_answered_in_an_earlier_round_does_not_answer_a_later_call() -> None:
    again = ToolCall("a", "t", "{}")  # some models number each round's calls from 0
    conversation = [LlmMessage.user("hi"), LlmMessage.assistant("", [again]),
                    LlmMessage.tool("a", "1"), LlmMessage.assistant("more", [again])]
    opening = opening_of(conversation, "q")
    assert [(m.role, m.content) for m in opening] == [
        ("user", "hi"), ("assistant", ""), ("tool", "1"), ("assistant", "more"), ("user", "q")]
    assert opening[3].tool_calls == ()


def test_a_dsl_agent_tool_with_the_parent_context_starts_from_the_conversation() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher")
    triage = Agent.from_dsl(
        'agent triage { model = "m"\n'
        '  tool research : agent researcher { context = "parent" } }',
        llm=ScriptedProvider(asking("Asking.", ToolCall("c", "research",
                                                         '{"input": "Which capital?"}')),
                             "ok"),
        agents=[researcher])
    triage.run("France, please.")
    assert seen(requests[0]) == [("user", "France, please."), ("assistant", "Asking."),
                                 ("user", "Which capital?")]


def test_the_builder_adds_a_sub_agent_with_the_parent_context() -> None:
    requests: list[LlmRequest] = []
    researcher = Agent(recording(requests), name="researcher")
    provider = ScriptedProvider(asking("Asking.", ToolCall("c", "ask", '{"input": "q?"}')),
                                "ok")
    registry = OperatorRegistry().register(LLM_CHAT, LlmChatOperator(provider))
    operator = (AgentBuilder.create("triage", registry=registry).model("m")
                .sub_agent("ask", researcher.operator, context="parent").to_operator("triage"))
    operator.execute("go")
    assert seen(requests[0]) == [("user", "go"), ("assistant", "Asking."), ("user", "q?")]
    assert operator.agent_def.agent_calls[0].context == "parent"


@pytest.mark.parametrize(("context", "refused"), [("parent", True), ("fresh", False)])
def test_the_conversation_a_child_starts_from_counts_against_the_callers_budget(
        context: str, refused: bool) -> None:
    # The child asks for 1,000 tokens: with the question alone that fits what is left of the
    # caller's 2,500, with the caller's 2,000 tokens of conversation too it does not.
    researcher = Agent(FunctionProvider(lambda request: LlmResponse("x")), name="researcher",
                       max_tokens=1_000)
    answers = iter([LlmResponse("", "tool_calls", tool_calls=(ASK,), prompt_tokens=10,
                                completion_tokens=10), LlmResponse("done")])
    triage = Agent(FunctionProvider(lambda request: next(answers)),
                   [researcher.as_tool(context=context)],  # type: ignore[arg-type]  # a str
                   name="triage", budget={"tokens": 2_500}, max_tokens=50)
    output = triage.run_output("France " * 1_150)
    (message,) = [m for m in output.messages if m.role == "tool"]
    assert message.is_error is refused
    assert ("the calling agent's run's tokens budget" in message.content) is refused


async def test_a_parent_context_call_run_away_from_its_callers_messages_fails_saying_so(
        ) -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    tool = researcher.as_tool(context="parent").operator
    with pytest.raises(SubAgentError, match=r"caller's conversation .* outside the caller's"):
        await tool.execute({"input": "q"}, OperatorContext.root())


async def test_a_parent_context_call_a_durable_runner_runs_asks_it_to_start_from_the_caller(
        ) -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    tool = researcher.as_tool(context="parent").operator
    elsewhere = CHILDREN_ELSEWHERE.set(True)  # as a Temporal worker's tool activity sets it
    try:
        with pytest.raises(ChildRunRequested) as requested:
            await tool.execute({"input": "q"}, OperatorContext.root())
    finally:
        CHILDREN_ELSEWHERE.reset(elsewhere)
    assert (requested.value.question, requested.value.context) == ("q", "parent")
