"""Memory strategies: what the model sees, always pair-aware, over long tool-heavy runs."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

import pytest

from bloge import AgentMemoryStrategy, ConversationMemory, LlmMessage
from bloge.agent.memory import SlidingWindowMemory, SummaryMemory
from bloge.llm import HeuristicTokenEstimator, LlmResponse, ToolCall

from .helpers import agent_with, calls, scripted


def tool_heavy_conversation(rounds: int) -> list[LlmMessage]:
    """system, then per round: user, assistant with 1 to 3 tool calls, their tool messages, answer."""
    messages = [LlmMessage.system("You are a test agent.")]
    for index in range(rounds):
        messages.append(LlmMessage.user(f"question {index} " + "word " * (index % 7)))
        width = 1 + index % 3
        tool_calls = [ToolCall(f"c{index}-{k}", "echo", '{"text": "x"}') for k in range(width)]
        messages.append(LlmMessage.assistant("", tool_calls))
        messages.extend(LlmMessage.tool(call.id, f"result {call.id}") for call in tool_calls)
        messages.append(LlmMessage.assistant(f"answer {index}"))
    return messages


def assert_pairs_intact(view: Sequence[LlmMessage]) -> None:
    """Every tool message answers a call in view, and every call in view is answered."""
    asked = {c.id for m in view for c in m.tool_calls}
    answered = {m.tool_call_id for m in view if m.role == "tool"}
    assert answered <= asked, f"orphan tool results: {answered - asked}"
    assert asked <= answered, f"calls without results: {asked - answered}"


STRATEGIES = {
    "sliding_window": lambda initial: ConversationMemory.sliding_window(initial, 7),
    "token_budget": lambda initial: ConversationMemory.token_budget(initial, 120, HeuristicTokenEstimator()),
    "summary_without_summarizer": lambda initial: ConversationMemory.summary(initial, None, 6),
    "full": ConversationMemory.full,
}


@pytest.mark.parametrize("make", STRATEGIES.values(), ids=STRATEGIES.keys())
async def test_pruning_never_splits_a_tool_call_from_its_results(make: Callable[[list[LlmMessage]], ConversationMemory]) -> None:
    conversation = tool_heavy_conversation(40)
    memory = make(conversation[:1])
    for index, message in enumerate(conversation[1:], start=1):
        memory.append(message)
        following = conversation[index + 1] if index + 1 < len(conversation) else None
        if following is not None and following.role == "tool":
            continue  # the loop calls the model only after a whole tool round is back
        await memory.prepare()
        view = memory.messages()
        assert_pairs_intact(view)
        assert view[0] == conversation[0], "the system prompt is never pruned"


def test_sliding_window_keeps_system_messages_and_the_last_n_others() -> None:
    messages = [LlmMessage.system("s"), *[LlmMessage.user(str(i)) for i in range(10)]]
    view = ConversationMemory.sliding_window(messages, 3).messages()
    assert [m.content for m in view] == ["s", "7", "8", "9"]


def test_sliding_window_drops_a_straddling_pair_whole() -> None:
    call = ToolCall("c1", "t", "{}")
    messages = [LlmMessage.user("q"), LlmMessage.assistant("", [call]), LlmMessage.tool("c1", "r"),
                LlmMessage.assistant("a")]
    view = ConversationMemory.sliding_window(messages, 2).messages()
    assert [m.content for m in view] == ["a"]


def test_sliding_window_keeps_the_newest_pair_even_when_larger_than_the_window() -> None:
    tool_calls = [ToolCall(f"c{i}", "t", "{}") for i in range(4)]
    memory = SlidingWindowMemory([LlmMessage.user("q")], 2)
    memory.append(LlmMessage.assistant("", tool_calls))
    for call in tool_calls:
        memory.append(LlmMessage.tool(call.id, "r"))
    view = memory.messages()
    assert len(view) == 5
    assert_pairs_intact(view)


def test_token_budget_uses_the_estimator_it_is_given() -> None:
    class CountsMessages:
        def estimate(self, message: LlmMessage) -> int:
            return 10

    messages = [LlmMessage.user(str(i)) for i in range(10)]
    view = ConversationMemory.token_budget(messages, 35, CountsMessages()).messages()
    assert [m.content for m in view] == ["7", "8", "9"]


def test_summary_replaces_older_messages_with_a_summary() -> None:
    seen: list[list[str]] = []

    class Summarizer:
        def summarize(self, messages: Sequence[LlmMessage]) -> LlmResponse:
            seen.append([m.content for m in messages])
            return LlmResponse("user asked 0 to 3", prompt_tokens=30, completion_tokens=5)

    memory = SummaryMemory([LlmMessage.system("s")], Summarizer(), 2)
    for index in range(6):
        memory.append(LlmMessage.user(str(index)))
    asyncio.run(memory.prepare())
    view = memory.messages()
    assert [m.content for m in view] == [
        "s", "Summary of the earlier conversation:\nuser asked 0 to 3", "4", "5"]
    assert seen == [["0", "1", "2", "3"]]
    assert (memory.usage.llm_calls, memory.usage.prompt_tokens) == (1, 30)


def test_a_new_summary_folds_in_the_previous_one() -> None:
    seen: list[list[str]] = []

    async def summarize(messages: Sequence[LlmMessage]) -> str:
        seen.append([m.content for m in messages])
        return f"summary {len(seen)}"

    class Summarizer:
        def summarize(self, messages: Sequence[LlmMessage]) -> Awaitable[str]:
            return summarize(messages)

    memory = SummaryMemory([], Summarizer(), 1)
    for index in range(2):
        memory.append(LlmMessage.user(str(index)))
    asyncio.run(memory.prepare())
    memory.append(LlmMessage.user("2"))
    asyncio.run(memory.prepare())
    assert seen[1] == ["Summary of the earlier conversation:\nsummary 1", "1"]
    assert [m.content for m in memory.messages()] == [
        "Summary of the earlier conversation:\nsummary 2", "2"]


def test_summary_without_a_summarizer_degrades_to_a_window() -> None:
    memory = ConversationMemory.summary([LlmMessage.user(str(i)) for i in range(5)], None, 2)
    asyncio.run(memory.prepare())
    assert [m.content for m in memory.messages()] == ["3", "4"]


def test_summary_calls_count_in_usage_but_not_in_turns() -> None:
    class Summarizer:
        def summarize(self, messages: Sequence[LlmMessage]) -> LlmResponse:
            return LlmResponse("earlier: echo", prompt_tokens=100, completion_tokens=10)

    provider = scripted(calls(("echo", {"text": "a"})), calls(("echo", {"text": "b"})), "done")
    registry_agent = agent_with(provider, configure=lambda b: b.memory(AgentMemoryStrategy.Summary(2)))
    agent = type(registry_agent)("testAgent", registry_agent.agent_def, registry_agent.registry,
                                 summarizer=Summarizer())
    output = agent.execute("go")
    assert output.turns_used == 3
    assert output.usage.llm_calls > 3
    assert output.checkpoint.conversation[0].content.startswith("Summary of the earlier conversation")
    assert [m.role for m in output.messages].count("tool") == 2, "the transcript is never pruned"


def test_the_agent_sends_the_memory_view_and_keeps_the_whole_transcript() -> None:
    provider = scripted(*[calls(("echo", {"text": str(i)})) for i in range(5)], "done")
    agent = agent_with(provider, configure=lambda b: b.memory(AgentMemoryStrategy.SlidingWindow(3))
                       .system_prompt("sys").max_turns(10))
    output = agent.execute("go")
    for request in provider.requests:
        assert request.messages[0].content == "sys"
        assert len(request.messages) <= 1 + 3
        assert_pairs_intact(request.messages)
    assert len(output.messages) == 1 + 1 + 5 * 2 + 1
    assert len(output.checkpoint.conversation) <= 4


def test_custom_memory_comes_from_its_factory() -> None:
    created: list[list[LlmMessage]] = []

    class LastTwo:
        def create(self, initial: Sequence[LlmMessage]) -> ConversationMemory:
            created.append(list(initial))
            return ConversationMemory.sliding_window(initial, 2)

    provider = scripted(calls(("echo", {"text": "a"})), "done")
    agent = agent_with(provider, configure=lambda b: b.memory(AgentMemoryStrategy.Custom(LastTwo())))
    agent.execute("go")
    assert created == [[LlmMessage.user("go")]]
    assert len(provider.requests[1].messages) == 2


def shuffled_history(seed: int, length: int) -> list[LlmMessage]:
    """Messages of every kind in a random order: system messages anywhere, tool rounds, tool
    messages answering nothing, a call answered twice, rounds left unanswered."""
    chooser = random.Random(seed)  # noqa: S311 -- a reproducible test history, not a secret
    messages: list[LlmMessage] = []
    open_calls: list[str] = []
    while len(messages) < length:
        kind = chooser.choice(["user", "answer", "calls", "tool", "tool", "stray", "system"])
        index = len(messages)
        if kind == "user":
            messages.append(LlmMessage.user(f"question {index} " + "word " * chooser.randrange(9)))
        elif kind == "answer":
            messages.append(LlmMessage.assistant(f"answer {index}"))
        elif kind == "calls":
            open_calls = [f"c{index}-{k}" for k in range(chooser.randrange(1, 4))]
            messages.append(LlmMessage.assistant("", [ToolCall(c, "echo", "{}") for c in open_calls]))
        elif kind == "tool" and open_calls:
            messages.append(LlmMessage.tool(chooser.choice(open_calls), "result " * chooser.randrange(5)))
        elif kind == "stray":
            messages.append(LlmMessage.tool(f"unknown-{index}", "stray"))
        elif kind == "system":
            messages.append(LlmMessage.system(f"note {index}"))
    return messages


FROM_HISTORY = {
    "sliding_window(1)": lambda initial: ConversationMemory.sliding_window(initial, 1),
    "sliding_window(5)": lambda initial: ConversationMemory.sliding_window(initial, 5),
    "sliding_window(20)": lambda initial: ConversationMemory.sliding_window(initial, 20),
    "token_budget(1)": lambda initial: ConversationMemory.token_budget(initial, 1, HeuristicTokenEstimator()),
    "token_budget(60)": lambda initial: ConversationMemory.token_budget(initial, 60, HeuristicTokenEstimator()),
    "token_budget(400)": lambda initial: ConversationMemory.token_budget(initial, 400, HeuristicTokenEstimator()),
}


@pytest.mark.parametrize("make", FROM_HISTORY.values(), ids=FROM_HISTORY.keys())
@pytest.mark.parametrize("seed", range(12))
def test_a_memory_given_a_history_sees_what_it_would_after_appending_it(
    make: Callable[[Sequence[LlmMessage]], ConversationMemory], seed: int
) -> None:
    history = shuffled_history(seed, 150)
    appended = make([])
    for message in history:
        appended.append(message)
    assert make(history).messages() == appended.messages()
    assert make(iter(history)).messages() == appended.messages()
